//! Who a container lives for, as its `lifetime` label records it.

/// Who a container lives for: the creating process, or a session that outlives processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lifetime {
    Process,
    #[default]
    Session,
}

impl Lifetime {
    pub fn as_str(self) -> &'static str {
        match self {
            Lifetime::Process => "process",
            Lifetime::Session => "session",
        }
    }

    pub fn parse(text: &str) -> Option<Lifetime> {
        match text {
            "process" => Some(Lifetime::Process),
            "session" => Some(Lifetime::Session),
            _ => None,
        }
    }
}
