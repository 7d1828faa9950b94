//! What asking a registry about an image's manifest found: an answer that is not a success,
//! the manifest present, no connection at all, no answer in time, or nothing this probe can
//! read.

use std::time::Duration;

use super::registry_answer::RegistryAnswer;
use crate::error::ErrorCode;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeOutcome {
    /// The registry answered with an error status, at the ping, its token service or the
    /// manifest.
    Answered(RegistryAnswer),
    /// The manifest is there: the registry does not explain the engine's failure.
    Present,
    /// The manifest is an index that holds no image for the platform asked for.
    WithoutPlatform { wanted: String, held: Vec<String> },
    /// No connection: the name does not resolve, nothing listens, TLS fails.
    Unreachable(String),
    /// Connected, but no answer within the bound.
    TimedOut(Duration),
    /// Something this probe cannot read as a fact about the image (a redirect loop, a
    /// server that is no registry, an unusable challenge).
    Inconclusive(String),
}

impl ProbeOutcome {
    /// A request that got no answer: unreachable when no connection was made.
    pub fn from_transport(err: &reqwest::Error, what: &str) -> ProbeOutcome {
        let text = format!("{what}: {}", crate::error::describe(err));
        if err.is_connect() {
            ProbeOutcome::Unreachable(text)
        } else {
            ProbeOutcome::Inconclusive(text)
        }
    }

    /// The code the registry's answer stands for; `None` when it explains nothing.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            ProbeOutcome::Answered(answer) => answer.code(),
            ProbeOutcome::WithoutPlatform { .. } => Some(ErrorCode::ImageNotFound),
            ProbeOutcome::Unreachable(_) => Some(ErrorCode::RegistryUnreachable),
            ProbeOutcome::TimedOut(_) => Some(ErrorCode::Timeout),
            ProbeOutcome::Present | ProbeOutcome::Inconclusive(_) => None,
        }
    }

    /// What was found, in words (never a secret the probe used: see `scrubbed`).
    pub fn reason(&self) -> String {
        match self {
            ProbeOutcome::Answered(answer) => answer.reason(),
            ProbeOutcome::Present => "the manifest is there".into(),
            ProbeOutcome::WithoutPlatform { wanted, held } => format!(
                "its index holds no image for {wanted}, only for {}",
                held.join(", ")
            ),
            ProbeOutcome::Unreachable(why) | ProbeOutcome::Inconclusive(why) => why.clone(),
            ProbeOutcome::TimedOut(bound) => {
                format!("no answer within {} ms", bound.as_millis())
            }
        }
    }

    /// The same, with `secret` taken out of every text the registry or the network gave.
    pub fn scrubbed(self, secret: &str) -> ProbeOutcome {
        if secret.len() < 3 {
            return self;
        }
        let scrub = |text: String| text.replace(secret, "***");
        match self {
            ProbeOutcome::Answered(mut answer) => {
                answer.text = scrub(answer.text);
                for entry in &mut answer.errors {
                    entry.message = scrub(std::mem::take(&mut entry.message));
                    entry.code = scrub(std::mem::take(&mut entry.code));
                }
                ProbeOutcome::Answered(answer)
            }
            ProbeOutcome::Unreachable(why) => ProbeOutcome::Unreachable(scrub(why)),
            ProbeOutcome::Inconclusive(why) => ProbeOutcome::Inconclusive(scrub(why)),
            other => other,
        }
    }
}
