//! What a config asked for beyond its session that the host has not allowed, and the trust
//! option that would allow it: the fields a `DEVCONTAINER` error carries. A floor of its own,
//! so that `error.rs` stands on it rather than on `workspace`.

/// The trust option that allows one refusal: a flag set to true, or a list holding these
/// items (`option` is the option's name as JavaScript spells it, e.g. `hostPaths`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grant {
    Flag(&'static str),
    List(&'static str, Vec<String>),
}

impl Grant {
    /// The option's name as JavaScript spells it.
    pub fn option(&self) -> &'static str {
        match self {
            Grant::Flag(option) | Grant::List(option, _) => option,
        }
    }

    /// The grant as a host would write it: `privileged: true`, `capabilities: ["SYS_PTRACE"]`.
    pub fn text(&self) -> String {
        match self {
            Grant::Flag(option) => format!("{option}: true"),
            Grant::List(option, items) => format!("{option}: {}", quoted(items)),
        }
    }
}

/// One thing a config asks for that the host has not allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub field: String,
    pub what: String,
    /// The trust option that would allow it, as a host would write it.
    pub allow: String,
    /// The same option, structured, for a host that asks its user and grants it.
    pub grant: Grant,
}

impl Refusal {
    pub fn new(field: &str, what: impl Into<String>, grant: Grant) -> Refusal {
        Refusal {
            field: field.to_string(),
            what: what.into(),
            allow: grant.text(),
            grant,
        }
    }
}

fn quoted(items: &[String]) -> String {
    let inner: Vec<String> = items.iter().map(|i| format!("{i:?}")).collect();
    format!("[{}]", inner.join(", "))
}
