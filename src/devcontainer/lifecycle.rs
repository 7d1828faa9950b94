//! Lifecycle commands in their three forms: a string (run by `/bin/sh -c`), an array (argv,
//! no shell), an object (named commands run in parallel, all of which must succeed).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, ErrorCode, Result};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Command {
    Shell(String),
    Argv(Vec<String>),
}

impl Command {
    pub fn argv(&self) -> Vec<String> {
        match self {
            Command::Shell(script) => vec!["/bin/sh".into(), "-c".into(), script.clone()],
            Command::Argv(argv) => argv.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum LifecycleCommand {
    Single(Command),
    /// Name → command, run at the same time.
    Parallel(Vec<(String, Command)>),
}

impl LifecycleCommand {
    pub fn commands(&self) -> Vec<(String, Command)> {
        match self {
            LifecycleCommand::Single(c) => vec![(String::new(), c.clone())],
            LifecycleCommand::Parallel(named) => named.clone(),
        }
    }
}

fn command(value: &Value, field: &str) -> Result<Command> {
    match value {
        Value::String(s) => Ok(Command::Shell(s.clone())),
        Value::Array(items) if !items.is_empty() => items
            .iter()
            .map(|i| i.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .map(Command::Argv)
            .ok_or_else(|| invalid(field, "an array command must hold only strings")),
        _ => Err(invalid(
            field,
            "must be a string, a non-empty array of strings, or an object of those",
        )),
    }
}

fn invalid(field: &str, why: &str) -> Error {
    Error::new(ErrorCode::Devcontainer, format!("{field}: {why}"))
}

pub fn parse_lifecycle(value: &Value, field: &str) -> Result<LifecycleCommand> {
    match value {
        Value::Object(map) => map
            .iter()
            .map(|(name, v)| Ok((name.clone(), command(v, &format!("{field}.{name}"))?)))
            .collect::<Result<Vec<_>>>()
            .map(LifecycleCommand::Parallel),
        other => command(other, field).map(LifecycleCommand::Single),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_the_three_forms() {
        assert_eq!(
            parse_lifecycle(&json!("npm ci"), "f").unwrap(),
            LifecycleCommand::Single(Command::Shell("npm ci".into()))
        );
        assert_eq!(
            parse_lifecycle(&json!(["make", "all"]), "f")
                .unwrap()
                .commands()[0]
                .1
                .argv(),
            vec!["make", "all"]
        );
        let parallel = parse_lifecycle(&json!({"a": "x", "b": ["y"]}), "f").unwrap();
        assert_eq!(parallel.commands().len(), 2);
        assert!(parse_lifecycle(&json!(42), "f").is_err());
        assert!(parse_lifecycle(&json!([1]), "f").is_err());
    }
}
