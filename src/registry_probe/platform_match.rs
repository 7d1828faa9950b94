//! Whether an image index (OCI index, Docker manifest list) holds an image for a platform
//! (`os/arch[/variant]`), as the engines choose from one: the same OS and architecture
//! (`x86_64` is `amd64`, `aarch64` is `arm64`), and the same variant where both name one
//! (`arm64`'s `v8` is its default).

use serde::Deserialize;

use oci_client::manifest::{IMAGE_MANIFEST_LIST_MEDIA_TYPE, OCI_IMAGE_INDEX_MEDIA_TYPE};

/// The most of an index read.
pub const INDEX_LIMIT: usize = 4 << 20;

#[derive(Deserialize)]
struct Index {
    #[serde(default)]
    manifests: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    platform: Option<Platform>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Platform {
    #[serde(default)]
    pub os: String,
    #[serde(default)]
    pub architecture: String,
    #[serde(default)]
    pub variant: Option<String>,
}

impl Platform {
    /// `os/arch[/variant]`; `None` for anything else.
    pub fn parse(text: &str) -> Option<Platform> {
        let mut parts = text.split('/');
        let (os, architecture) = (parts.next()?, parts.next()?);
        let variant = parts.next().map(str::to_string);
        (parts.next().is_none() && !os.is_empty() && !architecture.is_empty()).then(|| Platform {
            os: os.to_ascii_lowercase(),
            architecture: architecture.to_ascii_lowercase(),
            variant,
        })
    }

    fn arch(&self) -> &str {
        match self.architecture.as_str() {
            "x86_64" | "x86-64" => "amd64",
            "aarch64" => "arm64",
            other => other,
        }
    }

    fn variant(&self) -> Option<&str> {
        match (self.arch(), self.variant.as_deref()) {
            ("arm64", Some("v8")) => None,
            (_, v) => v.filter(|v| !v.is_empty()),
        }
    }

    fn serves(&self, wanted: &Platform) -> bool {
        let variant = match (self.variant(), wanted.variant()) {
            (Some(have), Some(want)) => have.eq_ignore_ascii_case(want),
            _ => true,
        };
        self.os.eq_ignore_ascii_case(&wanted.os) && self.arch() == wanted.arch() && variant
    }
}

impl std::fmt::Display for Platform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.os, self.architecture)?;
        match &self.variant {
            Some(v) if !v.is_empty() => write!(f, "/{v}"),
            _ => Ok(()),
        }
    }
}

/// Whether `content_type` is an index's.
pub fn is_index(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or_default().trim();
    essence == OCI_IMAGE_INDEX_MEDIA_TYPE || essence == IMAGE_MANIFEST_LIST_MEDIA_TYPE
}

/// `None` when `index` holds an image for `wanted` (or cannot be read: nothing is
/// concluded); else the platforms it holds.
pub fn missing_platform(index: &[u8], wanted: &Platform) -> Option<Vec<Platform>> {
    let index: Index = serde_json::from_slice(index).ok()?;
    let held: Vec<Platform> = index
        .manifests
        .into_iter()
        .filter_map(|m| m.platform)
        .collect();
    if held.is_empty() || held.iter().any(|p| p.serves(wanted)) {
        return None;
    }
    Some(held)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(platforms: &[(&str, &str, Option<&str>)]) -> Vec<u8> {
        let manifests: Vec<_> = platforms
            .iter()
            .map(|(os, arch, variant)| {
                let mut platform = serde_json::json!({ "os": os, "architecture": arch });
                if let Some(v) = variant {
                    platform["variant"] = serde_json::json!(v);
                }
                serde_json::json!({ "mediaType": "x", "digest": "sha256:0", "size": 1, "platform": platform })
            })
            .collect();
        serde_json::to_vec(&serde_json::json!({ "schemaVersion": 2, "manifests": manifests }))
            .unwrap()
    }

    #[test]
    fn an_index_serves_a_platform_as_the_engines_choose() {
        let amd_and_arm = index(&[
            ("linux", "amd64", None),
            ("linux", "arm", Some("v7")),
            ("linux", "arm64", Some("v8")),
        ]);
        let wanted = |p: &str| Platform::parse(p).unwrap();
        for served in [
            "linux/amd64",
            "linux/x86_64",
            "linux/arm64",
            "linux/aarch64",
            "linux/arm64/v8",
            "linux/arm/v7",
            "linux/arm",
        ] {
            assert_eq!(
                missing_platform(&amd_and_arm, &wanted(served)),
                None,
                "{served}"
            );
        }
        let held = missing_platform(&amd_and_arm, &wanted("linux/s390x")).unwrap();
        let shown: Vec<String> = held.iter().map(Platform::to_string).collect();
        assert_eq!(shown, ["linux/amd64", "linux/arm/v7", "linux/arm64/v8"]);
        assert!(missing_platform(&amd_and_arm, &wanted("linux/arm/v6")).is_some());
        assert!(missing_platform(&amd_and_arm, &wanted("windows/amd64")).is_some());
        // Nothing to conclude from what cannot be read, or holds no platforms.
        assert_eq!(missing_platform(b"not json", &wanted("linux/s390x")), None);
        assert_eq!(missing_platform(&index(&[]), &wanted("linux/s390x")), None);
        for bad in ["", "linux", "linux/", "/amd64", "a/b/c/d"] {
            assert_eq!(Platform::parse(bad), None, "{bad}");
        }
        assert!(is_index(
            "application/vnd.oci.image.index.v1+json; charset=utf-8"
        ));
        assert!(!is_index("application/vnd.oci.image.manifest.v1+json"));
    }
}
