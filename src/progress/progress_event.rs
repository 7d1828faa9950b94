//! One progress event and the phases it can belong to.

/// The part of a session's creation an event is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// An image pulled from its registry.
    Pull,
    /// The devcontainer.json's Dockerfile (or the remote user's uid image) built.
    Build,
    /// The image the features are installed in built.
    Features,
    /// The container made and started.
    Create,
    /// A lifecycle command run.
    Lifecycle,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Pull => "pull",
            Phase::Build => "build",
            Phase::Features => "features",
            Phase::Create => "create",
            Phase::Lifecycle => "lifecycle",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgressEvent {
    pub session_id: String,
    pub phase: Phase,
    /// The image pulled, a build's output line, the step taken.
    pub detail: String,
    /// Bytes so far (pulls).
    pub current: Option<u64>,
    /// Bytes in all, as far as known (pulls).
    pub total: Option<u64>,
}
