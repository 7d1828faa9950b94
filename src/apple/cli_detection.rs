//! Whether Apple's `container` CLI stands in for an engine: on macOS, when no Engine API
//! answered and the caller named no particular engine, the CLI's version if it runs.

use crate::engine::EngineOptions;

/// The CLI's `--version` text, when this is macOS, `options` name no engine and it answers.
#[cfg(target_os = "macos")]
pub async fn apple_cli_version(options: &EngineOptions) -> Option<String> {
    if options.kind.is_some()
        || options.socket_path.is_some()
        || options.host.is_some()
        || options.context.is_some()
    {
        return None;
    }
    let out = tokio::process::Command::new(super::cli_args::PROGRAM)
        .arg("--version")
        .output()
        .await
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[cfg(not(target_os = "macos"))]
pub async fn apple_cli_version(_options: &EngineOptions) -> Option<String> {
    None
}
