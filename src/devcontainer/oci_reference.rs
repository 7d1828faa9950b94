//! A feature's OCI reference (`<registry>/<namespace>/<id>[:tag|@sha256:…]`), read as the
//! reference grammar reads it, so that the registry checked (trusted, loopback for plain
//! HTTP) is the one a client contacts.

use serde::{Deserialize, Serialize};

/// An OCI artifact: `registry/repository` plus a tag or a digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OciRef {
    pub registry: String,
    /// `<namespace>/<id>`.
    pub repository: String,
    pub tag: String,
    pub digest: Option<String>,
}

impl OciRef {
    /// `registry/repository`, without tag or digest: what `installsAfter`,
    /// `overrideFeatureInstallOrder` and `dependsOn` match on.
    pub fn resource(&self) -> String {
        format!("{}/{}", self.registry, self.repository)
    }

    /// The feature's id (the repository's last segment).
    pub fn id(&self) -> &str {
        self.repository
            .rsplit('/')
            .next()
            .unwrap_or(&self.repository)
    }

    /// Whether the registry is this host, where plain HTTP is allowed.
    pub fn is_loopback(&self) -> bool {
        crate::registry_probe::is_loopback(&self.registry)
    }
}

impl std::fmt::Display for OciRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.digest {
            Some(d) => write!(f, "{}@{d}", self.resource()),
            None => write!(f, "{}:{}", self.resource(), self.tag),
        }
    }
}

/// The longest repository and tag the grammar allows.
const REPOSITORY_MAX: usize = 255;
const TAG_MAX: usize = 128;

/// `<registry>/<namespace>/<id>[:tag|@sha256:<hex>]`, read as the reference grammar
/// (distribution's, which `oci-client` follows) reads it; `None` when it is not one, names
/// no registry (Docker Hub would be meant), or gives a tag and a digest both.
pub fn parse_oci_ref(reference: &str) -> Option<OciRef> {
    let (name, tag, digest) = match reference.split_once('@') {
        Some((name, digest)) => (name, "latest", Some(sha256_digest(digest)?)),
        None => match reference.rsplit_once(':') {
            Some((name, tag)) if !tag.contains('/') => (name, tag, None),
            _ => (reference, "latest", None),
        },
    };
    let (registry, repository) = name.split_once('/')?;
    let mut components = repository.split('/');
    let well_formed = is_registry(registry)
        && is_tag(tag)
        && repository.len() <= REPOSITORY_MAX
        && repository.contains('/')
        && components.all(is_path_component);
    well_formed.then(|| OciRef {
        registry: registry.to_string(),
        repository: repository.to_string(),
        tag: tag.to_string(),
        digest,
    })
}

/// A first component the grammar takes for a registry: it has a `.` or a `:`, or is
/// `localhost`; host name labels (letters, digits, inner dashes) and a port of digits.
fn is_registry(registry: &str) -> bool {
    let names_one = registry.contains(['.', ':']) || registry == "localhost";
    let (host, port) = match registry.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (registry, None),
    };
    let is_label = |label: &str| {
        !label.is_empty()
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    let is_port = |port: &str| {
        !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) && port.parse::<u16>().is_ok()
    };
    names_one && host.split('.').all(is_label) && port.is_none_or(is_port)
}

/// Lowercase letters and digits, runs of them joined by one `.`, one or two `_`, or dashes.
fn is_path_component(component: &str) -> bool {
    let is_alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let bytes = component.as_bytes();
    bytes.first().is_some_and(is_alnum)
        && bytes.last().is_some_and(is_alnum)
        && component
            .split(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            .all(|joint| matches!(joint, "." | "_" | "__") || joint.bytes().all(|b| b == b'-'))
}

/// A word character first, then word characters, `.` and `-`; ASCII only.
fn is_tag(tag: &str) -> bool {
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    tag.len() <= TAG_MAX
        && tag.bytes().next().is_some_and(is_word)
        && tag.bytes().all(|b| is_word(b) || matches!(b, b'.' | b'-'))
}

/// `sha256:<64 lowercase hex digits>`, as the OCI digest grammar writes it: the one digest
/// a feature is checked against. Uppercase is refused, not folded: a registry and
/// oci-client take the reference as written.
fn sha256_digest(digest: &str) -> Option<String> {
    let hex = digest.strip_prefix("sha256:")?;
    let ok = hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    ok.then(|| digest.to_string())
}

#[cfg(test)]
#[path = "oci_reference_tests.rs"]
mod tests;
