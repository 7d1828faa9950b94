//! A terminal in a `DockerShell`'s container, as its commands run: its directory, user and
//! environment unless the request names others (its environment is added to the shell's),
//! through the agent where the shell uses one (the only way into a session reached without an engine); a use of the container while it is open.

use super::docker_shell::DockerShell;
use crate::error::Result;
use crate::runtime::{begin_use, UseGuard};
use crate::terminal::{open_terminal, TerminalInput, TerminalOutput, TerminalRequest};

impl DockerShell {
    /// Opens `request` in the shell's container; the guard holds the container in use.
    pub async fn open_terminal(
        &self,
        mut request: TerminalRequest,
    ) -> Result<(TerminalInput, TerminalOutput, UseGuard)> {
        let options = self.options();
        let guard = begin_use(self.usage()).await?;
        let reached = options.host.reach(&options.container).await?;
        let mut env = options.env.clone();
        env.append(&mut request.env);
        request.env = env;
        request.replace_env |= options.replace_env;
        request.cwd = request.cwd.or_else(|| Some(options.cwd.clone()));
        request.user = request.user.or_else(|| options.user.clone());
        let (input, output) = open_terminal(
            reached.engine.as_ref(),
            &options.container,
            reached.agent.as_ref(),
            &request,
        )
        .await?;
        Ok((input, output, guard))
    }
}
