//! `userEnvProbe`: the remote user's shell environment, probed once per container start by
//! running the user's shell (from the container's passwd, else /bin/sh) as that user and
//! reading its environment NUL-separated, bounded and with a timeout. A failed probe is
//! a warning: commands then get the container's environment. Where the runtime does not
//! show a container's configured environment (a Pod), it is read from a process started
//! there.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use super::remote_env::{process_env, remote_env, RemoteEnv};
use super::stored_settings::SessionSettings;
use crate::engine::Engine;
use crate::error::Result;
use crate::runtime::exec::ExecRequest;
use crate::runtime::{EngineContainer, ExecTarget};

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

async fn probe<T: ExecTarget>(
    target: &T,
    user: Option<&str>,
    mode: &str,
) -> Option<BTreeMap<String, String>> {
    let container = target.name();
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
    let found = match target.run(request).await {
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

/// The environment of a process started in the container, with the default `PATH` where
/// it has none; an image without `cat` gives only that.
async fn own_env<T: ExecTarget>(target: &T) -> BTreeMap<String, String> {
    let request = ExecRequest {
        command: vec!["cat".into(), "/proc/self/environ".into()],
        timeout: Some(PROBE_TIMEOUT),
        output_limit: Some(PROBE_OUTPUT_LIMIT),
        ..Default::default()
    };
    let listed = match target.run(request).await {
        Ok(out) if out.exit_code == 0 => String::from_utf8_lossy(&out.stdout)
            .split('\0')
            .filter(|item| !item.is_empty())
            .map(str::to_string)
            .collect(),
        Ok(out) => {
            tracing::warn!(
                "the environment of container '{}' was not read (exit {})",
                target.name(),
                out.exit_code
            );
            Vec::new()
        }
        Err(err) => {
            tracing::warn!("the environment of container '{}': {err}", target.name());
            Vec::new()
        }
    };
    process_env(Some(listed))
}

/// The probe's mode: a session without devcontainer.json gets the container's environment.
fn mode_of(settings: &SessionSettings) -> &str {
    match settings.config_path {
        Some(_) => settings.behaviour.user_env_probe(),
        None => "none",
    }
}

/// One start of a container and what was read in it: its own environment (where the
/// runtime does not show it) and the probe's.
#[derive(Clone)]
struct Probed {
    started: String,
    own: Option<BTreeMap<String, String>>,
    probed: Option<BTreeMap<String, String>>,
}

/// Each container's probed environment, for the start it was probed in.
#[derive(Default)]
pub struct ProbeCache(Mutex<HashMap<String, Probed>>);

impl ProbeCache {
    fn cached(&self, container: &str, started: &str) -> Option<Probed> {
        let cache = self.0.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .get(container)
            .filter(|p| p.started == started)
            .cloned()
    }

    fn store(&self, container: &str, entry: Probed) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(container.to_string(), entry);
    }

    /// The environment a session's commands run with in a container reached through
    /// `target` whose runtime does not show its configured environment: read, with the
    /// probe, once per `started` (what tells one start of the container from the next).
    pub async fn target_env<T: ExecTarget>(
        &self,
        target: &T,
        started: String,
        settings: &SessionSettings,
    ) -> RemoteEnv {
        let found = match self.cached(target.name(), &started) {
            Some(found) => found,
            None => {
                let found = Probed {
                    started,
                    own: Some(own_env(target).await),
                    probed: probe(target, settings.remote_user(), mode_of(settings)).await,
                };
                self.store(target.name(), found.clone());
                found
            }
        };
        let own = found.own.unwrap_or_else(|| process_env(None));
        remote_env(own, found.probed.as_ref(), &settings.remote_env)
    }

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
        let probed = match self.cached(container, &started) {
            Some(found) => found.probed,
            None => {
                let target = EngineContainer {
                    engine,
                    id: container,
                };
                let probed = probe(&target, settings.remote_user(), mode_of(settings)).await;
                let found = Probed {
                    started,
                    own: None,
                    probed,
                };
                self.store(container, found.clone());
                found.probed
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
