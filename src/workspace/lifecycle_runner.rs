//! Running devcontainer lifecycle commands inside the container (and `initializeCommand` on
//! the host, only when the caller allowed host commands).

use std::path::Path;

use futures_util::future::join_all;

use crate::devcontainer::{Command, LifecycleCommand};
use crate::error::{Error, ErrorCode, Result};
use crate::progress::{Phase, Progress};
use crate::runtime::exec::ExecRequest;
use crate::runtime::ExecTarget;
use crate::session_settings::{resolve_command, RemoteEnv};

/// The most kept in memory of each stream of a lifecycle command (its end is shown when
/// it fails).
const OUTPUT_LIMIT: usize = 1 << 20;

/// The lifecycle steps a new container runs, in order (`postAttachCommand` runs on each
/// `environment()`).
pub const CREATE_STEPS: [&str; 4] = [
    "onCreateCommand",
    "updateContentCommand",
    "postCreateCommand",
    "postStartCommand",
];

pub struct InContainer<'a, T> {
    pub target: T,
    pub user: Option<&'a str>,
    pub cwd: &'a str,
    pub env: &'a RemoteEnv,
    /// Told of each step that has commands, as it begins.
    pub progress: &'a Progress,
}

fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(5)..].join("\n")
}

impl<T: ExecTarget> InContainer<'_, T> {
    async fn run_one(&self, field: &str, name: &str, command: &Command) -> Result<()> {
        let request = ExecRequest {
            command: command.argv(),
            working_dir: Some(self.cwd.to_string()),
            env: self.env.env.clone(),
            replace_env: self.env.replace,
            user: self.user.map(str::to_string),
            output_limit: Some(OUTPUT_LIMIT),
            ..Default::default()
        };
        let label = if name.is_empty() {
            field.to_string()
        } else {
            format!("{field}.{name}")
        };
        let out = self.target.run(request).await?;
        if out.exit_code != 0 {
            return Err(Error::new(
                ErrorCode::Devcontainer,
                format!(
                    "{label} exited {} in container '{}': {}",
                    out.exit_code,
                    self.target.name(),
                    tail(if out.stderr.is_empty() {
                        &out.stdout
                    } else {
                        &out.stderr
                    })
                ),
            ));
        }
        Ok(())
    }

    /// Each command of a step in order (the image metadata's, then the config's), with
    /// `${containerEnv:…}` resolved: a single command, or every entry of an object at once
    /// (all must succeed).
    pub async fn run(&self, field: &str, commands: &[&LifecycleCommand]) -> Result<()> {
        if !commands.is_empty() {
            self.progress.step(Phase::Lifecycle, field);
        }
        for command in commands {
            let named = resolve_command(command, &self.env.container).commands();
            let results =
                join_all(named.iter().map(|(name, c)| self.run_one(field, name, c))).await;
            results.into_iter().collect::<Result<Vec<_>>>()?;
        }
        Ok(())
    }
}

/// `initializeCommand` on the host, in the project directory: a string through `/bin/sh -c`,
/// an array as argv; entries of an object one after another.
pub async fn run_on_host(project: &Path, command: &LifecycleCommand) -> Result<()> {
    for (name, c) in command.commands() {
        let argv = c.argv();
        let status = tokio::process::Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(project)
            .status()
            .await
            .map_err(|e| {
                Error::new(
                    ErrorCode::Devcontainer,
                    format!("initializeCommand {name}: {e}"),
                )
            })?;
        if !status.success() {
            return Err(Error::new(
                ErrorCode::Devcontainer,
                format!(
                    "initializeCommand {name} exited {status} in {}",
                    project.display()
                ),
            ));
        }
    }
    Ok(())
}
