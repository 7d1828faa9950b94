//! An image reference split as docker splits it: the repository (with its registry, or
//! Docker Hub's when the first component names none), and the tag or digest (`latest`
//! when neither is given: an engine asked for a name alone would pull every tag).

use crate::error::{Error, Result};
use crate::registry_auth::{canonical_host, is_docker_hub};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageReference {
    /// The repository as written, without tag or digest (`node`, `127.0.0.1:5000/ci/busy`).
    pub repository: String,
    /// A tag, or a digest (`sha256:…`).
    pub tag: String,
    /// The registry's host, one spelling per registry (`docker.io` for Docker Hub).
    pub registry: String,
}

/// The registry component and the rest, by docker's rule: a first component is a registry
/// when it has a `.` or a `:`, or is `localhost`.
fn split_registry(repository: &str) -> Option<(&str, &str)> {
    repository
        .split_once('/')
        .filter(|(first, _)| first.contains(['.', ':']) || *first == "localhost")
}

fn registry_of(repository: &str) -> String {
    split_registry(repository).map_or_else(|| "docker.io".to_string(), |(r, _)| canonical_host(r))
}

impl ImageReference {
    /// The repository at its registry: without the registry's host, and under `library/`
    /// for a Docker Hub name of one component (`node` is `library/node`).
    pub fn path(&self) -> String {
        let path = split_registry(&self.repository).map_or(self.repository.as_str(), |(_, p)| p);
        if is_docker_hub(&self.registry) && !path.contains('/') {
            format!("library/{path}")
        } else {
            path.to_string()
        }
    }

    pub fn parse(image: &str) -> Result<ImageReference> {
        let invalid = || {
            Error::invalid_argument(format!(
                "image '{}' is not an image reference",
                image.escape_debug()
            ))
        };
        if image.is_empty()
            || image.len() > 1024
            || image.starts_with(['-', '/', ':', '@'])
            || image.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            return Err(invalid());
        }
        let (repository, tag) = match image.split_once('@') {
            Some((repository, digest)) if digest.contains(':') => (repository, digest),
            Some(_) => return Err(invalid()),
            None => {
                let last = image.rfind('/').map_or(0, |slash| slash + 1);
                match image[last..].rfind(':') {
                    Some(colon) => (&image[..last + colon], &image[last + colon + 1..]),
                    None => (image, "latest"),
                }
            }
        };
        if repository.is_empty() || tag.is_empty() || repository.ends_with('/') {
            return Err(invalid());
        }
        // Both engines refuse it too (dockerd with a 400, Podman with a 500).
        let path = split_registry(repository).map_or(repository, |(_, p)| p);
        if path.bytes().any(|b| b.is_ascii_uppercase()) {
            return Err(Error::invalid_argument(format!(
                "image '{}': a repository name must be lowercase",
                image.escape_debug()
            )));
        }
        Ok(ImageReference {
            repository: repository.to_string(),
            tag: tag.to_string(),
            registry: registry_of(repository),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(image: &str) -> (String, String, String) {
        let r = ImageReference::parse(image).unwrap();
        (r.repository, r.tag, r.registry)
    }

    #[test]
    fn references_split_as_docker_splits_them() {
        let s = |a: &str, b: &str, c: &str| (a.to_string(), b.to_string(), c.to_string());
        assert_eq!(
            parts("node:20-bookworm"),
            s("node", "20-bookworm", "docker.io")
        );
        assert_eq!(parts("busybox"), s("busybox", "latest", "docker.io"));
        assert_eq!(parts("mona/tool:1"), s("mona/tool", "1", "docker.io"));
        assert_eq!(
            parts("127.0.0.1:5000/ci/busy:1"),
            s("127.0.0.1:5000/ci/busy", "1", "127.0.0.1:5000")
        );
        assert_eq!(
            parts("127.0.0.1:5000/ci/busy"),
            s("127.0.0.1:5000/ci/busy", "latest", "127.0.0.1:5000")
        );
        assert_eq!(
            parts("localhost/x"),
            s("localhost/x", "latest", "localhost")
        );
        assert_eq!(parts("index.docker.io/library/node:20").2, "docker.io");
        let path = |image: &str| ImageReference::parse(image).unwrap().path();
        assert_eq!(path("node:20"), "library/node");
        assert_eq!(path("mona/tool:1"), "mona/tool");
        assert_eq!(path("127.0.0.1:5000/ci/busy:1"), "ci/busy");
        assert_eq!(path("localhost/x"), "x");
        assert_eq!(parts("GHCR.io/o/i:t").2, "ghcr.io");
        let digest = format!("sha256:{}", "a".repeat(64));
        assert_eq!(
            parts(&format!("ghcr.io/o/i@{digest}")),
            s("ghcr.io/o/i", &digest, "ghcr.io")
        );
        for bad in [
            "",
            "-x",
            "a b",
            "x@nodigest",
            "x:",
            "reg:5000/",
            "a\nb",
            "/abs",
            "Node:20",
            "127.0.0.1:5000/Ci/busy:1",
        ] {
            assert!(ImageReference::parse(bad).is_err(), "{bad:?}");
        }
    }
}
