//! The image references the host routes requests and credentials by, against the readers
//! the requests go through: a feature reference `parse_oci_ref` accepts names the registry,
//! repository, tag and digest oci-client reads from it, and counts as loopback (plain HTTP
//! allowed) only when the host a URL of it reaches (by the `url` crate) is this machine; an
//! image `ImageReference::parse` accepts goes to the registry oci-client reads from it.
//! Registries compare as the credential lookup compares them (Docker Hub's names as one).

use std::str::FromStr;

use oci_client::Reference;

use crate::devcontainer::parse_oci_ref;
use crate::engine::ImageReference;
use crate::registry_auth::canonical_host;

/// Whether a plain-HTTP URL with `registry` as its authority reaches this machine.
fn url_reaches_loopback(registry: &str) -> bool {
    let Ok(url) = url::Url::parse(&format!("http://{registry}/v2/")) else {
        return false;
    };
    match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

pub fn check_image_refs(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let theirs = Reference::from_str(text).ok();
    if let Some(ours) = parse_oci_ref(text) {
        if let Some(theirs) = &theirs {
            let (mine, its) = (
                canonical_host(&ours.registry),
                canonical_host(theirs.registry()),
            );
            assert_eq!(mine, its, "the registry of {text:?}");
            assert_eq!(
                ours.repository,
                theirs.repository(),
                "the repository of {text:?}"
            );
            assert_eq!(
                ours.digest.as_deref(),
                theirs.digest(),
                "the digest of {text:?}"
            );
            if ours.digest.is_none() {
                assert_eq!(Some(ours.tag.as_str()), theirs.tag(), "the tag of {text:?}");
            }
        }
        if ours.is_loopback() {
            assert!(
                url_reaches_loopback(&ours.registry),
                "{text:?} is not loopback"
            );
        }
    }
    if let (Ok(ours), Some(theirs)) = (ImageReference::parse(text), &theirs) {
        let registry = canonical_host(theirs.registry());
        assert_eq!(ours.registry, registry, "the registry of image {text:?}");
    }
}
