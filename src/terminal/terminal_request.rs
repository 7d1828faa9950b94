//! What a terminal runs: the program (default: the image's bash, else `sh`), its size,
//! environment, directory and user.

use std::collections::BTreeMap;

use crate::error::{Error, Result};

/// The program a terminal runs when none is given: bash where the image has it, else sh.
/// A fixed script: nothing of the caller's is put into it.
const DEFAULT_SHELL: &str = "if [ -x /bin/bash ]; then exec /bin/bash; else exec /bin/sh; fi";

#[derive(Debug, Clone, Default)]
pub struct TerminalRequest {
    /// Argv; empty for the default shell.
    pub command: Vec<String>,
    pub cols: u16,
    pub rows: u16,
    pub env: BTreeMap<String, String>,
    /// `env` is the program's whole environment, not an addition to the container's.
    pub replace_env: bool,
    pub cwd: Option<String>,
    pub user: Option<String>,
}

impl TerminalRequest {
    /// The size as given by a caller, each 1..=65535, else `INVALID_ARGUMENT`.
    pub fn size(cols: u32, rows: u32) -> Result<(u16, u16)> {
        let check = |n: u32, what: &str| {
            u16::try_from(n).ok().filter(|n| *n > 0).ok_or_else(|| {
                Error::invalid_argument(format!("terminal {what} {n} is not within 1..=65535"))
            })
        };
        Ok((check(cols, "cols")?, check(rows, "rows")?))
    }

    /// The argv to run, and the environment with `TERM` set unless the caller set it.
    pub fn resolved(&self) -> Result<(Vec<String>, BTreeMap<String, String>)> {
        let argv = match self.command.is_empty() {
            true => vec!["/bin/sh".into(), "-c".into(), DEFAULT_SHELL.into()],
            false => self.command.clone(),
        };
        if argv[0].is_empty() {
            return Err(Error::invalid_argument(
                "a terminal's command must name a program",
            ));
        }
        if let Some(cwd) = &self.cwd {
            if !cwd.starts_with('/') {
                return Err(Error::invalid_argument(format!(
                    "terminal cwd '{cwd}' must be an absolute container path"
                )));
            }
        }
        crate::runtime::check_environment(&self.env, "terminal env")?;
        let mut env = self.env.clone();
        env.entry("TERM".into())
            .or_insert_with(|| "xterm-256color".into());
        Ok((argv, env))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_outside_a_terminals_range_are_refused() {
        assert_eq!(TerminalRequest::size(80, 24).unwrap(), (80, 24));
        assert!(TerminalRequest::size(0, 24).is_err());
        assert!(TerminalRequest::size(80, 65536).is_err());
    }

    #[test]
    fn the_default_is_a_shell_and_term_is_set_unless_given() {
        let mut request = TerminalRequest::default();
        let (argv, env) = request.resolved().unwrap();
        assert_eq!(argv[0], "/bin/sh");
        assert_eq!(env["TERM"], "xterm-256color");
        request.env.insert("TERM".into(), "dumb".into());
        request.command = vec!["top".into()];
        let (argv, env) = request.resolved().unwrap();
        assert_eq!((argv[0].as_str(), env["TERM"].as_str()), ("top", "dumb"));
        request.cwd = Some("relative".into());
        assert!(request.resolved().is_err());
    }
}
