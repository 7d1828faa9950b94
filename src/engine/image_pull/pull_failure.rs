//! What a failed pull rejects with. The engine's pull stream gives only words, so the facts
//! come from the registry itself: it is asked from this machine for the image's manifest,
//! with the pull's credentials (`registry_probe`), and its answer decides the code —
//! `REGISTRY_AUTH` (401/403), `IMAGE_NOT_FOUND` (404 for the manifest),
//! `REGISTRY_RATE_LIMITED` (429), `REGISTRY_ERROR` (5xx), `REGISTRY_UNREACHABLE` (no
//! connection), `TIMEOUT` (no answer). Where the answer explains nothing (the manifest is
//! there now, or the engine is on another machine and this one cannot reach the registry)
//! the failure is the engine's: `ENGINE_ERROR` with its message. Messages name the image
//! and the registry, carry the registry's reason, and never a secret.

use std::time::Duration;

use super::image_reference::ImageReference;
use super::registry_access::engine_insecure;
use crate::engine::connection::Engine;
use crate::error::{Error, ErrorCode};
use crate::registry_auth::{api_host, RegistryCredentials};
use crate::registry_probe::{probe_manifest, ProbeOutcome, ProbeTarget};

/// What a failure message is about.
pub struct PullContext<'a> {
    pub image: &'a str,
    pub reference: &'a ImageReference,
    pub platform: Option<&'a str>,
    pub endpoint: String,
    pub credentials: Option<&'a RegistryCredentials>,
}

impl PullContext<'_> {
    fn redact(&self, text: &str) -> String {
        match self.credentials {
            Some(c) => c.redact(text),
            None => text.to_string(),
        }
    }

    fn subject(&self) -> String {
        match self.platform {
            Some(platform) => format!("image '{}' for platform '{platform}'", self.image),
            None => format!("image '{}'", self.image),
        }
    }

    /// The engine reported the pull failed for `reason`: the registry is asked what it
    /// answers for the image, within the engine's timeout, and the answer decides.
    pub async fn failed(&self, engine: &Engine, reason: &str) -> Error {
        let registry = &self.reference.registry;
        let host = api_host(registry);
        let path = self.reference.path();
        let target = ProbeTarget {
            host: &host,
            path: &path,
            reference: &self.reference.tag,
            platform: self.platform,
            credentials: self.credentials,
            insecure: engine_insecure(engine, registry).await,
            bound: engine.timeout(),
        };
        let outcome = probe_manifest(&target).await;
        self.verdict(&outcome, reason, engine.is_local())
    }

    /// The error for the engine's `reason` and what the registry answered this machine;
    /// `local`: the engine shares this machine's network, so a registry this machine
    /// cannot reach is one the engine could not reach either.
    pub fn verdict(&self, outcome: &ProbeOutcome, reason: &str, local: bool) -> Error {
        let engine_said = self.redact(reason.trim());
        let found = self.redact(&outcome.reason());
        let (subject, registry) = (self.subject(), &self.reference.registry);
        let code = match outcome.code() {
            Some(ErrorCode::RegistryUnreachable | ErrorCode::Timeout) if !local => None,
            code => code,
        };
        let Some(code) = code else {
            let place = if local {
                ""
            } else {
                " (the engine is on another machine)"
            };
            return Error::new(
                ErrorCode::EngineError,
                format!(
                    "pull of {subject} failed in the engine {}: {engine_said}; registry {registry}, asked from this machine{place}: {found}",
                    self.endpoint
                ),
            );
        };
        let message = match code {
            ErrorCode::RegistryAuth => match self.credentials {
                Some(c) => format!(
                    "pull of {subject}: registry {registry} refused the credentials from the {} (user '{}'): {found}",
                    c.source, c.username
                ),
                None => format!(
                    "pull of {subject}: registry {registry} asks for credentials and the docker config has none for it (`docker login {registry}`, or a credential helper; a registry may answer so for a repository it does not have, too): {found}"
                ),
            },
            ErrorCode::ImageNotFound => format!(
                "{subject} is not present in the engine {} and registry {registry} does not have it: {found}",
                self.endpoint
            ),
            ErrorCode::RegistryRateLimited => {
                format!("pull of {subject}: registry {registry} limits the rate of pulls: {found}")
            }
            ErrorCode::RegistryError => {
                format!("pull of {subject}: registry {registry} failed on its side: {found}")
            }
            ErrorCode::RegistryUnreachable => {
                format!("pull of {subject}: registry {registry} cannot be reached: {found}")
            }
            _ => format!("pull of {subject}: registry {registry} did not answer: {found}"),
        };
        Error::new(code, format!("{message}; the engine said: {engine_said}"))
    }

    /// No message from the engine for `bound`: the pull is abandoned.
    pub fn stalled(&self, bound: Duration) -> Error {
        Error::timeout(format!(
            "pull of {} from registry {}: no progress for {} ms (the registry or the engine stalled); abandoned",
            self.subject(),
            self.reference.registry,
            bound.as_millis()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry_probe::{RegistryAnswer, Step};

    const IMAGE: &str = "127.0.0.1:5000/ci/busy:1";

    fn reference() -> ImageReference {
        ImageReference::parse(IMAGE).unwrap()
    }

    fn context<'a>(
        reference: &'a ImageReference,
        credentials: Option<&'a RegistryCredentials>,
    ) -> PullContext<'a> {
        PullContext {
            image: IMAGE,
            reference,
            platform: None,
            endpoint: "unix:///var/run/docker.sock".into(),
            credentials,
        }
    }

    fn answered(status: u16, body: &str) -> ProbeOutcome {
        ProbeOutcome::Answered(RegistryAnswer::new(
            Step::Manifest,
            status,
            body.as_bytes(),
            None,
        ))
    }

    #[test]
    fn the_registrys_answer_decides_whatever_the_engine_said() {
        let r = reference();
        let anonymous = context(&r, None);
        let manifest_unknown =
            r#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}"#;
        // The same words from dockerd and Podman for a missing tag, or for a full disk:
        // only the registry's answer tells them apart.
        let engine_says = "initializing source docker://127.0.0.1:5000/ci/busy:1: reading manifest 1 in 127.0.0.1:5000/ci/busy: manifest unknown";
        for (outcome, local, code) in [
            (
                answered(404, manifest_unknown),
                true,
                ErrorCode::ImageNotFound,
            ),
            (answered(401, "{}"), true, ErrorCode::RegistryAuth),
            (answered(429, "{}"), true, ErrorCode::RegistryRateLimited),
            (answered(500, ""), true, ErrorCode::RegistryError),
            (
                answered(404, manifest_unknown),
                false,
                ErrorCode::ImageNotFound,
            ),
            (answered(405, ""), true, ErrorCode::EngineError),
            (ProbeOutcome::Present, true, ErrorCode::EngineError),
            (
                ProbeOutcome::WithoutPlatform {
                    wanted: "linux/s390x".into(),
                    held: vec!["linux/amd64".into()],
                },
                true,
                ErrorCode::ImageNotFound,
            ),
            (
                ProbeOutcome::Unreachable("dns error".into()),
                true,
                ErrorCode::RegistryUnreachable,
            ),
            (
                ProbeOutcome::TimedOut(Duration::from_secs(2)),
                true,
                ErrorCode::Timeout,
            ),
            // A remote engine may reach what this machine cannot.
            (
                ProbeOutcome::Unreachable("dns error".into()),
                false,
                ErrorCode::EngineError,
            ),
            (
                ProbeOutcome::TimedOut(Duration::from_secs(2)),
                false,
                ErrorCode::EngineError,
            ),
            (
                ProbeOutcome::Inconclusive("not a registry".into()),
                true,
                ErrorCode::EngineError,
            ),
        ] {
            let err = anonymous.verdict(&outcome, engine_says, local);
            assert_eq!(err.code, code, "{outcome:?} local={local}: {}", err.message);
            assert!(err.message.contains(IMAGE), "{}", err.message);
            assert!(err.message.contains("127.0.0.1:5000"), "{}", err.message);
            assert!(err.message.contains(&outcome.reason()), "{}", err.message);
            assert!(err.message.contains(engine_says), "{}", err.message);
        }
        let missing = anonymous.verdict(&answered(404, manifest_unknown), engine_says, true);
        assert!(
            missing
                .message
                .contains("MANIFEST_UNKNOWN: manifest unknown"),
            "{}",
            missing.message
        );
    }

    #[test]
    fn messages_name_image_and_registry_and_never_the_secret() {
        let r = reference();
        let credentials = RegistryCredentials {
            username: "ci".into(),
            password: "hunter22".into(),
            identity_token: None,
            server_address: "127.0.0.1:5000".into(),
            source: "auths of the docker config".into(),
        };
        let refused = answered(
            401,
            r#"{"errors":[{"code":"UNAUTHORIZED","message":"bad password hunter22"}]}"#,
        );
        let err = context(&r, Some(&credentials)).verdict(&refused, "unauthorized: hunter22", true);
        assert_eq!(err.code, ErrorCode::RegistryAuth);
        for part in [
            IMAGE,
            "registry 127.0.0.1:5000",
            "auths of the docker config",
            "UNAUTHORIZED",
        ] {
            assert!(err.message.contains(part), "{}", err.message);
        }
        assert!(!err.message.contains("hunter22"), "{}", err.message);
        let anonymous =
            context(&r, None).verdict(&answered(401, "{}"), "no basic auth credentials", true);
        assert!(
            anonymous.message.contains("has none for it"),
            "{}",
            anonymous.message
        );
        let stalled = context(&r, None).stalled(Duration::from_millis(1500));
        assert_eq!(stalled.code, ErrorCode::Timeout);
        assert!(stalled.message.contains("1500 ms"), "{}", stalled.message);
    }
}
