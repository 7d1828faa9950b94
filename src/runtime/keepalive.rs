//! The main process of a sandbox container: idle until SIGTERM, then exit 0 at once, so
//! that `stop` does not wait out the grace period. The engine's init (`HostConfig.Init`)
//! runs it, reaping zombies and forwarding signals.

pub const SHELL: &str = "/bin/sh";

const SCRIPT: &str = "trap 'exit 0' TERM INT HUP; while :; do sleep 86400 & wait $!; done";

pub fn sandbox_command() -> Vec<String> {
    vec![SHELL.to_string(), "-c".to_string(), SCRIPT.to_string()]
}
