//! The session agent in a Pod, spoken to over the exec stream. No registry and no host
//! folder reach a node, so the agent is delivered by an exec of the image's `/bin/sh` that
//! writes the bytes it is sent into the Pod's agent folder (an `emptyDir`), then started by
//! a second exec whose stdin and stdout carry the protocol. It acts as each caller's user,
//! so it is used only where it runs as root (a Pod exec runs as the Pod's user); elsewhere,
//! and for images without `/bin/sh`, the runtime keeps the plain exec, the reason logged.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures_util::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::AttachParams;
use kube::Api;
use tokio::sync::OnceCell;
use tokio_util::io::ReaderStream;

use super::api_errors::from_kube;
use super::pod_exec::run_plain_with;
use super::session_pod::CONTAINER;
use crate::agent::{
    agent_account_file, agent_binary, AgentChannel, AgentConnection, ConfiguredUser,
};
use crate::error::Result;
use crate::output::StreamKind;

/// The agent, in the Pod's agent folder (`session_pod::AGENT_DIR`).
pub(super) const AGENT_PATH: &str = "/.container-isolation/agent";
/// Writes stdin to `$1` whole before it replaces what is there (arguments, never text in
/// the script).
const RECEIVE: &str = r#"umask 077; cat > "$1.new" && chmod 0700 "$1.new" && mv -f "$1.new" "$1""#;
/// The exec stream's buffers per direction.
const STREAM_BUFFER: usize = 1 << 20;
/// How long the agent's delivery may take.
const DELIVERY_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);
pub(super) const NO_LINE: &str = "a Pod's agent speaks over the exec stream";

enum PodAgent {
    Up(Arc<AgentConnection>),
    /// Why the agent cannot serve this Pod.
    Unusable(String),
}

/// Whether the agent's binary is in a Pod's agent folder, or why it cannot be.
type Delivery = std::result::Result<(), String>;

/// One runtime's agents, one per Pod, started on first use, and their deliveries.
#[derive(Default)]
pub struct PodAgents {
    pods: Mutex<HashMap<String, Arc<OnceCell<PodAgent>>>>,
    deliveries: Mutex<HashMap<String, Arc<OnceCell<Delivery>>>>,
}

impl PodAgents {
    /// The agent of Pod `name` whose configured user is `user` (a `uid[:gid]` spec, empty for
    /// the image's), or why it cannot serve the Pod. An error is the cluster's.
    pub async fn for_pod(
        &self,
        pods: &Api<Pod>,
        name: &str,
        user: &str,
    ) -> Result<std::result::Result<Arc<AgentConnection>, String>> {
        loop {
            let cell = cell_of(&self.pods, name);
            let agent = cell
                .get_or_try_init(|| self.start_agent(pods, name, user))
                .await?;
            match agent {
                PodAgent::Up(connection) if !connection.is_closed() => {
                    return Ok(Ok(connection.clone()))
                }
                PodAgent::Up(_) => self.drop_cell(name, &cell),
                PodAgent::Unusable(why) => return Ok(Err(why.clone())),
            }
        }
    }

    /// The Pod's agent if one was started and its connection is up.
    pub fn live(&self, name: &str) -> Option<Arc<AgentConnection>> {
        let cell = self.pods.lock().unwrap().get(name)?.clone();
        match cell.get()? {
            PodAgent::Up(connection) if !connection.is_closed() => Some(connection.clone()),
            _ => None,
        }
    }

    /// The agent's binary delivered into Pod `name` (once per Pod), or why it cannot be; an
    /// error is the cluster's.
    pub async fn delivered(&self, pods: &Api<Pod>, name: &str) -> Result<Delivery> {
        cell_of(&self.deliveries, name)
            .get_or_try_init(|| deliver(pods, name))
            .await
            .cloned()
    }

    /// Closes and forgets the agent of a Pod that stopped or is gone.
    pub fn forget(&self, name: &str) {
        self.deliveries.lock().unwrap().remove(name);
        let cell = self.pods.lock().unwrap().remove(name);
        if let Some(PodAgent::Up(connection)) = cell.as_deref().and_then(OnceCell::get) {
            connection.close();
        }
    }

    fn drop_cell(&self, name: &str, cell: &Arc<OnceCell<PodAgent>>) {
        let mut pods = self.pods.lock().unwrap();
        if pods.get(name).is_some_and(|c| Arc::ptr_eq(c, cell)) {
            pods.remove(name);
        }
    }

    async fn start_agent(&self, pods: &Api<Pod>, name: &str, user: &str) -> Result<PodAgent> {
        let unusable = |why: String| {
            tracing::info!("Pod '{name}': no session agent ({why}); commands run by plain exec");
            Ok(PodAgent::Unusable(why))
        };
        if let Err(why) = self.delivered(pods, name).await? {
            return unusable(why);
        }
        let argv = vec![AGENT_PATH.to_string(), "serve".to_string()];
        let what = format!("start the session agent in Pod '{name}'");
        let channel = open_exec_channel(pods, name, argv, &what).await?;
        let configured = ConfiguredUser::Known(user.to_string());
        let connection = match AgentConnection::over(
            channel,
            name,
            AGENT_PATH,
            configured,
            NO_LINE.into(),
        )
        .await
        {
            Ok(connection) => Arc::new(connection),
            Err(err) => return unusable(err.message),
        };
        match agent_uid(&connection).await {
            Some(0) => Ok(PodAgent::Up(connection)),
            uid => {
                connection.close();
                let uid = uid.map_or("an unknown uid".to_string(), |u| format!("uid {u}"));
                unusable(format!(
                    "it runs as {uid}, the Pod's user, and acts as each caller's user only as root"
                ))
            }
        }
    }
}

/// Pod `name`'s cell in `cells`, made empty if it has none.
fn cell_of<T>(cells: &Mutex<HashMap<String, Arc<OnceCell<T>>>>, name: &str) -> Arc<OnceCell<T>> {
    let mut cells = cells.lock().unwrap();
    cells.entry(name.to_string()).or_default().clone()
}

/// Writes the agent's binary into the Pod's agent folder through its `/bin/sh`.
async fn deliver(pods: &Api<Pod>, name: &str) -> Result<Delivery> {
    let binary = match agent_binary(std::env::consts::ARCH) {
        Ok(binary) => binary,
        Err(why) => return Ok(Err(why)),
    };
    let receive = ["/bin/sh", "-c", RECEIVE, "sh", AGENT_PATH].map(str::to_string);
    let delivery = run_plain_with(pods, name, receive.to_vec(), Some(binary.bytes.clone()));
    let Ok(received) = tokio::time::timeout(DELIVERY_LIMIT, delivery).await else {
        return Ok(Err(format!(
            "its delivery through /bin/sh did not finish within {} s",
            DELIVERY_LIMIT.as_secs()
        )));
    };
    match received {
        Ok(outcome) if outcome.exit_code == 0 => Ok(Ok(())),
        Ok(outcome) => {
            let said = String::from_utf8_lossy(&outcome.stderr).trim().to_string();
            Ok(Err(format!(
                "its delivery through /bin/sh exited {}: {said}",
                outcome.exit_code
            )))
        }
        Err(err) if err.code == crate::error::ErrorCode::Forbidden => Err(err),
        Err(err) => Ok(Err(format!(
            "its delivery through /bin/sh failed: {}",
            err.message
        ))),
    }
}
/// `argv` on an exec of its own in Pod `name`, its stdin and output as an agent's channel;
/// stopping it ends the exec stream. `what` names it in errors.
pub(super) async fn open_exec_channel(
    pods: &Api<Pod>,
    name: &str,
    argv: Vec<String>,
    what: &str,
) -> Result<AgentChannel> {
    let params = AttachParams::default()
        .container(CONTAINER)
        .stdin(true)
        .stdout(true)
        .stderr(true)
        .max_stdin_buf_size(STREAM_BUFFER)
        .max_stdout_buf_size(STREAM_BUFFER)
        .max_stderr_buf_size(STREAM_BUFFER);
    let mut process = pods
        .exec(name, argv, &params)
        .await
        .map_err(|err| from_kube(err, what, "create pods/exec"))?;
    let (Some(input), Some(stdout), Some(stderr)) =
        (process.stdin(), process.stdout(), process.stderr())
    else {
        unreachable!("all three streams were asked for");
    };
    let tagged = |reader, kind| {
        ReaderStream::with_capacity(reader, 64 << 10)
            .take_while(|chunk| std::future::ready(chunk.is_ok()))
            .filter_map(move |chunk| std::future::ready(chunk.ok().map(|b| (kind, b))))
    };
    let output = futures_util::stream::select(
        tagged(stdout, StreamKind::Stdout),
        tagged(stderr, StreamKind::Stderr),
    );
    Ok(AgentChannel {
        input: Box::pin(input),
        output: Box::pin(output),
        // The process (its stream task) lives as long as the channel: dropping it ends the
        // stream, and with it the agent's stdin.
        stop: Box::new(move || process.abort()),
    })
}

/// The agent's own uid, from its `/proc/self/status`.
async fn agent_uid(connection: &Arc<AgentConnection>) -> Option<u32> {
    let status = agent_account_file(connection, "/proc/self/status")
        .await
        .ok()???;
    let status = String::from_utf8_lossy(&status).into_owned();
    status
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_agent_lives_in_the_pods_agent_folder() {
        let folder = format!("{}/", super::super::session_pod::AGENT_DIR);
        assert!(super::AGENT_PATH.starts_with(&folder));
    }
}
