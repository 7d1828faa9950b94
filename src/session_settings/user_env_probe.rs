//! `userEnvProbe`: the remote user's shell environment, probed once per container start by
//! running the user's shell (from the container's passwd, else /bin/sh) as that user and
//! reading its environment NUL-separated, bounded and with a timeout. A failed probe is
//! a warning: commands then get the container's environment.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use super::remote_env::{process_env, remote_env, RemoteEnv};
use super::stored_settings::SessionSettings;
use crate::engine::Engine;
use crate::error::Result;
use crate::runtime::exec::ExecRequest;
use crate::runtime::run_buffered;

const MARK: &str = "\u{1e}CI_ENV\u{1e}";
const PROBE_LIMIT: &str = "1048576";
const PROBE_OUTPUT_LIMIT: usize = (1 << 20) + 64;
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Run by `/bin/sh -c` with the shell's flags as `$1` and the output limit as `$2`; the
/// user's login shell comes from the container's passwd, nothing from the host is in it.
const PROBE: &str = r#"u=$(id -un 2>/dev/null); line=$(getent passwd "$u" 2>/dev/null || grep -m1 "^$u:" /etc/passwd 2>/dev/null); shell=${line##*:}; [ -n "$line" ] && [ -x "$shell" ] || shell=/bin/sh; "$shell" "$1" 'printf "\036CI_ENV\036"; cat /proc/self/environ; printf "\036CI_ENV\036"' </dev/null 2>/dev/null | head -c "$2""#;

/// Variables of the probing shell itself, not of the user's environment.
const SHELL_OWN: &[&str] = &["PWD", "OLDPWD", "SHLVL", "_"];

fn flags(mode: &str) -> Option<&'static str> {
    match mode {
        "loginShell" => Some("-lc"),
        "interactiveShell" => Some("-ic"),
        "loginInteractiveShell" => Some("-lic"),
        _ => None,
    }
}

/// The variables between the marks of the probe's output.
pub fn parse_probe(output: &[u8]) -> Option<BTreeMap<String, String>> {
    let text = String::from_utf8_lossy(output);
    let start = text.find(MARK)? + MARK.len();
    let end = start + text[start..].find(MARK)?;
    Some(
        text[start..end]
            .split('\0')
            .filter_map(|item| item.split_once('='))
            .filter(|(k, _)| !k.is_empty() && !SHELL_OWN.contains(k))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

async fn probe(
    engine: &Engine,
    container: &str,
    user: Option<&str>,
    mode: &str,
) -> Option<BTreeMap<String, String>> {
    let flags = flags(mode)?;
    let request = ExecRequest {
        command: ["/bin/sh", "-c", PROBE, "probe", flags, PROBE_LIMIT]
            .map(str::to_string)
            .to_vec(),
        user: user.map(str::to_string),
        timeout: Some(PROBE_TIMEOUT),
        // The container's own `head` may not honour the limit.
        output_limit: Some(PROBE_OUTPUT_LIMIT),
        ..Default::default()
    };
    let found = match run_buffered(engine, container, request).await {
        Ok(out) => parse_probe(&out.stdout),
        Err(err) => {
            tracing::warn!("userEnvProbe {mode} in container '{container}' failed: {err}");
            return None;
        }
    };
    if found.is_none() {
        tracing::warn!("userEnvProbe {mode} in container '{container}' printed no environment");
    }
    found
}

/// A container's start time and what the probe found in that start.
type Probed = (String, Option<BTreeMap<String, String>>);

/// Each container's probed environment, for the start it was probed in.
#[derive(Default)]
pub struct ProbeCache(Mutex<HashMap<String, Probed>>);

impl ProbeCache {
    pub fn forget(&self, container: &str) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(container);
    }

    /// The environment a session's commands run with in its (running) container.
    pub async fn session_env(
        &self,
        engine: &Engine,
        container: &str,
        settings: &SessionSettings,
    ) -> Result<RemoteEnv> {
        let inspected = engine
            .inspect_container(container, &format!("container '{container}'"))
            .await?;
        let started = inspected
            .state
            .and_then(|s| s.started_at)
            .unwrap_or_default();
        let own = process_env(inspected.config.and_then(|c| c.env));
        let cached = {
            let cache = self.0.lock().unwrap_or_else(|e| e.into_inner());
            cache
                .get(container)
                .filter(|(at, _)| *at == started)
                .map(|(_, env)| env.clone())
        };
        let probed = match cached {
            Some(env) => env,
            None => {
                // A session without devcontainer.json gets the container's environment.
                let mode = match settings.config_path {
                    Some(_) => settings.behaviour.user_env_probe(),
                    None => "none",
                };
                let env = probe(engine, container, settings.remote_user(), mode).await;
                self.0
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(container.to_string(), (started, env.clone()));
                env
            }
        };
        Ok(remote_env(own, probed.as_ref(), &settings.remote_env))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_between_the_marks_is_read() {
        let out = b"motd noise\x1eCI_ENV\x1eA=1\0PWD=/x\0B=x=y\0\x1eCI_ENV\x1etrailer";
        let env = parse_probe(out).unwrap();
        assert_eq!(env.len(), 2);
        assert_eq!(env["B"], "x=y");
        assert!(parse_probe(b"\x1eCI_ENV\x1eA=1").is_none());
        assert_eq!(flags("none"), None);
    }
}
