//! The main process of a sandbox container: idle until SIGTERM, then exit 0 at once, so
//! that `stop` does not wait out the grace period. The engine's init (`HostConfig.Init`)
//! runs it, reaping zombies and forwarding signals. Startup commands (devcontainer
//! `entrypoint`s) run first, each as its own `sh -c`, handed over as arguments.

pub const SHELL: &str = "/bin/sh";

const SCRIPT: &str = "trap 'exit 0' TERM INT HUP; while :; do sleep 86400 & wait $!; done";

/// Runs each argument with `sh -c` in order (a failing one is reported on stderr), then
/// idles as `SCRIPT` does.
const STARTUP_SCRIPT: &str = "trap 'exit 0' TERM INT HUP; \
for startup do /bin/sh -c \"$startup\" || echo \"startup command failed: $startup\" >&2; done; \
while :; do sleep 86400 & wait $!; done";

pub fn sandbox_command() -> Vec<String> {
    vec![SHELL.to_string(), "-c".to_string(), SCRIPT.to_string()]
}

/// The keep-alive, after `startup` commands.
pub fn sandbox_command_after(startup: &[String]) -> Vec<String> {
    if startup.is_empty() {
        return sandbox_command();
    }
    let mut argv = vec![
        SHELL.to_string(),
        "-c".to_string(),
        STARTUP_SCRIPT.to_string(),
        "startup".to_string(),
    ];
    argv.extend(startup.iter().cloned());
    argv
}
