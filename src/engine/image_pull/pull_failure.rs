//! What a failed pull rejects with: the registry's reason read into a stable code
//! (`REGISTRY_AUTH` for refused or missing credentials, `TIMEOUT`, else `IMAGE_NOT_FOUND`:
//! the image is not in the engine and could not be brought there), in a message that
//! names the image and the registry and never holds a secret.

use std::time::Duration;

use crate::error::{Error, ErrorCode};
use crate::registry_auth::RegistryCredentials;

/// What a failure message is about.
pub struct PullContext<'a> {
    pub image: &'a str,
    pub registry: &'a str,
    pub platform: Option<&'a str>,
    pub endpoint: String,
    pub credentials: Option<&'a RegistryCredentials>,
}

/// The code a registry's (or engine's) reason for a failed pull stands for. Docker Hub
/// answers "pull access denied" for a repository that does not exist as well: that stays
/// `IMAGE_NOT_FOUND`.
pub fn code_for_reason(reason: &str) -> ErrorCode {
    let lower = reason.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| lower.contains(w));
    if has(&[
        "pull access denied",
        "manifest unknown",
        "name unknown",
        "not found",
    ]) {
        return ErrorCode::ImageNotFound;
    }
    if has(&[
        "unauthorized",
        "authentication required",
        "no basic auth credentials",
        "incorrect username or password",
        "invalid username/password",
        "denied",
        "forbidden",
    ]) {
        return ErrorCode::RegistryAuth;
    }
    if has(&[
        "i/o timeout",
        "timeout exceeded",
        "deadline exceeded",
        "handshake timeout",
    ]) {
        return ErrorCode::Timeout;
    }
    ErrorCode::ImageNotFound
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

    /// The pull failed for `reason`, as the registry or the engine gave it.
    pub fn failed(&self, reason: &str) -> Error {
        let reason = self.redact(reason.trim());
        let code = code_for_reason(&reason);
        let (subject, registry) = (self.subject(), self.registry);
        let message = match code {
            ErrorCode::RegistryAuth => match self.credentials {
                Some(c) => format!(
                    "pull of {subject}: registry {registry} refused the credentials from the {} (user '{}'): {reason}",
                    c.source, c.username
                ),
                None => format!(
                    "pull of {subject}: registry {registry} asks for credentials and the docker config has none for it (`docker login {registry}`, or a credential helper): {reason}"
                ),
            },
            ErrorCode::Timeout => {
                format!("pull of {subject} from registry {registry} timed out: {reason}")
            }
            _ => format!(
                "{subject} is not present in the engine {} and could not be pulled from registry {registry}: {reason}",
                self.endpoint
            ),
        };
        Error::new(code, message)
    }

    /// No message from the engine for `bound`: the pull is abandoned.
    pub fn stalled(&self, bound: Duration) -> Error {
        Error::timeout(format!(
            "pull of {} from registry {}: no progress for {} ms (the registry or the engine stalled); abandoned",
            self.subject(),
            self.registry,
            bound.as_millis()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context<'a>(credentials: Option<&'a RegistryCredentials>) -> PullContext<'a> {
        PullContext {
            image: "127.0.0.1:5000/ci/busy:1",
            registry: "127.0.0.1:5000",
            platform: None,
            endpoint: "unix:///var/run/docker.sock".into(),
            credentials,
        }
    }

    #[test]
    fn docker_and_podman_reasons_map_to_codes() {
        for (reason, code) in [
            ("unauthorized: authentication required", ErrorCode::RegistryAuth),
            ("Head \"http://r/v2/x/manifests/1\": no basic auth credentials", ErrorCode::RegistryAuth),
            ("denied: requested access to the resource is denied", ErrorCode::RegistryAuth),
            ("manifest for r/x:1 not found: manifest unknown: manifest unknown", ErrorCode::ImageNotFound),
            ("initializing source docker://r/x:1: reading manifest 1 in r/x: manifest unknown", ErrorCode::ImageNotFound),
            ("pull access denied for nope, repository does not exist or may require 'docker login': denied", ErrorCode::ImageNotFound),
            ("dial tcp: lookup registry-1.docker.io: no such host", ErrorCode::ImageNotFound),
            ("net/http: TLS handshake timeout", ErrorCode::Timeout),
        ] {
            assert_eq!(code_for_reason(reason), code, "{reason}");
        }
    }

    #[test]
    fn messages_name_image_and_registry_and_never_the_secret() {
        let credentials = RegistryCredentials {
            username: "ci".into(),
            password: "hunter22".into(),
            identity_token: None,
            server_address: "127.0.0.1:5000".into(),
            source: "auths of the docker config".into(),
        };
        let err = context(Some(&credentials)).failed("unauthorized: bad password hunter22");
        assert_eq!(err.code, ErrorCode::RegistryAuth);
        for part in [
            "127.0.0.1:5000/ci/busy:1",
            "registry 127.0.0.1:5000",
            "auths of the docker config",
        ] {
            assert!(err.message.contains(part), "{}", err.message);
        }
        assert!(!err.message.contains("hunter22"), "{}", err.message);
        let anonymous = context(None).failed("no basic auth credentials");
        assert!(
            anonymous.message.contains("has none for it"),
            "{}",
            anonymous.message
        );
        let stalled = context(None).stalled(Duration::from_millis(1500));
        assert_eq!(stalled.code, ErrorCode::Timeout);
        assert!(stalled.message.contains("1500 ms"), "{}", stalled.message);
    }
}
