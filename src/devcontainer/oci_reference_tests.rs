//! Feature references against `oci-client`'s own reader: what is accepted here is accepted
//! there with the same parts, and the registry called loopback is one the request to it
//! would reach on this machine.

use oci_client::Reference;
use url::{Host, Url};

use super::*;

#[test]
fn oci_references_take_a_tag_or_a_digest_and_default_to_latest() {
    let r = parse_oci_ref("127.0.0.1:5000/ns/hello").unwrap();
    assert_eq!(
        (r.registry.as_str(), r.repository.as_str()),
        ("127.0.0.1:5000", "ns/hello")
    );
    assert_eq!(r.tag, "latest");
    assert!(r.is_loopback());
    assert_eq!(r.id(), "hello");
    let r = parse_oci_ref("registry.example/a/b/hello:1.2").unwrap();
    assert_eq!(
        (r.repository.as_str(), r.tag.as_str()),
        ("a/b/hello", "1.2")
    );
    assert!(!r.is_loopback());
    let digest = format!("sha256:{}", "a".repeat(64));
    let r = parse_oci_ref(&format!("localhost/ns/x@{digest}")).unwrap();
    assert_eq!(r.digest.as_deref(), Some(digest.as_str()));
    assert_eq!(r.to_string(), format!("localhost/ns/x@{digest}"));
    for bad in [
        "127.0.0.1:5000/hello",
        "a.b/ns/Upper",
        "a.b/ns/x@sha256:12",
        "a.b/ns/x:",
    ] {
        assert_eq!(parse_oci_ref(bad), None, "{bad}");
    }
}

/// Whether a request to `registry`, as a client builds its URL, goes to this machine.
fn reaches_loopback(registry: &str) -> bool {
    let Ok(url) = Url::parse(&format!("http://{registry}/v2/")) else {
        return false;
    };
    match url.host() {
        Some(Host::Domain(name)) => name == "localhost",
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Whether `reference` is accepted here, or how that disagrees with `oci-client`'s reading
/// of it or with where a request would go.
fn read_alike(reference: &str) -> Result<bool, String> {
    let Some(ours) = parse_oci_ref(reference) else {
        return Ok(false);
    };
    let theirs = Reference::try_from(reference)
        .map_err(|e| format!("{reference:?}: accepted, refused by oci-client ({e})"))?;
    let same_pin = match &ours.digest {
        Some(digest) => theirs
            .digest()
            .is_some_and(|d| d.eq_ignore_ascii_case(digest)),
        None => theirs.tag() == Some(ours.tag.as_str()),
    };
    if theirs.registry() != ours.registry || theirs.repository() != ours.repository || !same_pin {
        return Err(format!(
            "{reference:?}: read as {ours:?}, by oci-client as {theirs:?}"
        ));
    }
    let contacted = theirs.resolve_registry();
    if ours.is_loopback() && !reaches_loopback(contacted) {
        return Err(format!(
            "{reference:?}: plain HTTP allowed, but a request goes to {contacted}"
        ));
    }
    Ok(true)
}

#[test]
fn a_registry_is_what_the_reference_grammar_says_and_loopback_only_when_reached() {
    let digest = format!("sha256:{}", "a".repeat(64));
    let mut wrong = Vec::new();
    for (reference, loopback) in [
        ("localhost:1@other.example/ns/f:1", None),
        (&format!("localhost:1@other.example/ns/f@{digest}"), None),
        ("localhost:1?x/ns/f", None),
        ("localhost:1#x/ns/f", None),
        ("localhost:1\\other.example/ns/f", None),
        ("[::1]:5000/ns/f", None),
        ("[::1]/ns/f", None),
        ("::1/ns/f", None),
        ("localhost./ns/f", None),
        ("localhost:/ns/f", None),
        ("localhost:x/ns/f", None),
        ("localhost:1:2/ns/f", None),
        ("localhost:99999/ns/f", None),
        ("LOCALHOST/ns/f", None),
        ("localhost/ns/f", Some(true)),
        ("localhost:5000/ns/f:1", Some(true)),
        ("LocalHost:5000/ns/f", Some(true)),
        ("127.0.0.1:5000/ns/f", Some(true)),
        ("localhost.other.example/ns/f", Some(false)),
        ("127.0.0.1.other.example:5000/ns/f", Some(false)),
        ("other.example/ns/f", Some(false)),
    ] {
        let ours = parse_oci_ref(reference).map(|r| r.is_loopback());
        if ours != loopback {
            wrong.push(format!(
                "{reference:?}: loopback {ours:?}, not {loopback:?}"
            ));
        }
        match read_alike(reference) {
            Ok(accepted) if accepted == loopback.is_some() => {}
            Ok(accepted) => wrong.push(format!("{reference:?}: accepted {accepted}")),
            Err(why) => wrong.push(why),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_reference_accepted_is_read_alike_by_oci_client() {
    let registries = [
        "localhost",
        "localhost:1",
        "LOCALHOST:5000",
        "LocalHost",
        "localhost.",
        "localhost:",
        "localhost:x",
        "localhost:1:2",
        "localhost:99999",
        "localhost:+1",
        "127.0.0.1",
        "127.0.0.1:5000",
        "127.1:5000",
        "0x7f.1",
        "2130706433:80",
        "[::1]",
        "[::1]:5000",
        "::1",
        "localhost:1@other.example",
        "user@other.example",
        "localhost:1?x",
        "localhost:1#x",
        "localhost:1\\x",
        "localhost%2e",
        "localhost\t",
        "other.example",
        "other.example.",
        "Other.Example:443",
        "-a.example",
        "a-.example",
        "a..example",
        ".a.example",
        "a_b.example",
        "ünicode.example",
        "ns",
    ];
    let repositories = [
        "ns/f", "a/b/f", "f", "ns/F", "ns/.f", "ns/f.", "ns/-f", "ns/a__b", "ns/a___b", "ns/a--b",
        "ns/a.-b", "ns/a._b", "ns//f", "ns/f/", "ns/f:",
    ];
    let hex = "a".repeat(64);
    let suffixes = [
        String::new(),
        ":1".into(),
        ":1.2-rc_3".into(),
        ":.x".into(),
        ":-x".into(),
        ":_x".into(),
        ":ß".into(),
        ":".into(),
        ":a/b".into(),
        format!(":{}", "t".repeat(129)),
        format!("@sha256:{hex}"),
        format!("@sha256:{}", hex.to_uppercase()),
        format!("@sha256:{}", &hex[1..]),
        format!(":1@sha256:{hex}"),
        format!("@sha512:{hex}{hex}"),
        "@other.example/ns/f:1".into(),
        "@".into(),
    ];
    let (mut accepted, mut wrong) = (0, Vec::new());
    for registry in registries {
        for repository in repositories {
            for suffix in &suffixes {
                match read_alike(&format!("{registry}/{repository}{suffix}")) {
                    Ok(yes) => accepted += usize::from(yes),
                    Err(why) => wrong.push(why),
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(accepted > 100, "{accepted} accepted");
}
