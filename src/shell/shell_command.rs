//! What `execute` runs: a script for the shell (the contract's form), or an argv run as
//! given with no shell in between (for callers that hold argv, such as the CLI's `exec`).

use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellCommand {
    Script(String),
    Argv(Vec<String>),
}

impl ShellCommand {
    pub fn validate(&self) -> Result<()> {
        let empty = match self {
            ShellCommand::Script(s) => s.trim().is_empty(),
            ShellCommand::Argv(argv) => argv.first().is_none_or(|p| p.is_empty()),
        };
        if empty {
            Err(Error::invalid_argument("shell command is empty"))
        } else {
            Ok(())
        }
    }

    /// How the command appears in the log and in messages (argv joined by spaces; display
    /// only, never executed).
    pub fn display(&self) -> String {
        match self {
            ShellCommand::Script(s) => s.clone(),
            ShellCommand::Argv(argv) => argv.join(" "),
        }
    }
}
