//! Container names: generated, deterministic per project, and validated.

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// `config.name ?? `${config.id ?? 'ci'}-${8 hex}``; an empty name or id counts as absent.
pub fn container_name(name: Option<&str>, id: Option<&str>) -> Result<String> {
    let (name, id) = (name.filter(|n| !n.is_empty()), id.filter(|i| !i.is_empty()));
    let name = match name {
        Some(name) => name.to_string(),
        None => {
            let random = uuid::Uuid::new_v4().simple().to_string();
            format!("{}-{}", id.unwrap_or("ci"), &random[..8])
        }
    };
    validate_name(&name)?;
    Ok(name)
}

/// `agentbox-` + the first 12 hex digits of sha256(path).
pub fn compute_container_name(project_dir: &str) -> String {
    let digest = Sha256::digest(project_dir.as_bytes());
    format!("agentbox-{}", &hex::encode(digest)[..12])
}

/// The engine's own rule: `[a-zA-Z0-9][a-zA-Z0-9_.-]*`, and we cap the length.
pub fn validate_name(name: &str) -> Result<()> {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphanumeric());
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
    if first_ok && rest_ok && name.len() <= 128 {
        Ok(())
    } else {
        Err(Error::invalid_argument(format!(
            "container name '{name}' is invalid: use letters, digits, '_', '.', '-' (first a letter or digit), at most 128 characters"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_names_use_the_id_and_eight_hex_digits() {
        let name = container_name(None, Some("sess1")).unwrap();
        assert!(name.starts_with("sess1-"));
        assert_eq!(name.len(), "sess1-".len() + 8);
        assert!(container_name(None, None).unwrap().starts_with("ci-"));
        assert!(container_name(Some(""), Some(""))
            .unwrap()
            .starts_with("ci-"));
        assert_eq!(container_name(Some("mine"), Some("x")).unwrap(), "mine");
    }

    #[test]
    fn bad_names_are_rejected() {
        for bad in ["-x", "a b", "a/b", "$(id)", "../x"] {
            assert!(container_name(Some(bad), None).is_err(), "{bad}");
        }
        assert!(container_name(None, Some("a b")).is_err());
    }

    #[test]
    fn computed_names_are_sha256_prefixes() {
        // sha256("/home/u/project") computed with sha256sum
        assert_eq!(
            compute_container_name("/home/u/project"),
            "agentbox-4eb6cd28fb98"
        );
    }
}
