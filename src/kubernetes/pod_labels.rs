//! Our container labels on a Pod: every pair as an annotation (values there are free text:
//! paths, times), and the pairs Kubernetes accepts as labels also as labels, so that the
//! library selects its Pods by label as it filters containers on the engines.

use std::collections::BTreeMap;

/// Whether Kubernetes accepts `key` as a label key without a prefix, or `prefix/name`.
pub fn is_label_key(key: &str) -> bool {
    let name = match key.rsplit_once('/') {
        Some((prefix, name)) => {
            if prefix.is_empty() || prefix.len() > 253 || !is_subdomain(prefix) {
                return false;
            }
            name
        }
        None => key,
    };
    !name.is_empty() && name.len() <= 63 && is_label_value(name)
}

/// At most 63 of `[A-Za-z0-9_.-]`, beginning and ending with a letter or digit (or empty).
pub fn is_label_value(value: &str) -> bool {
    let bytes = value.as_bytes();
    if bytes.is_empty() {
        return true;
    }
    bytes.len() <= 63
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(b))
}

/// A DNS-1123 subdomain: lowercase letters, digits, '-' and '.', alphanumeric at both ends.
pub fn is_subdomain(text: &str) -> bool {
    let bytes = text.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 253
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-.".contains(b))
}

/// `(labels, annotations)` for `pairs`.
pub fn split_labels(
    pairs: &BTreeMap<String, String>,
) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let labels = pairs
        .iter()
        .filter(|(k, v)| is_label_key(k) && is_label_value(v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (labels, pairs.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_rules() {
        assert!(is_label_key("dev.container-isolation.managed"));
        assert!(is_label_key("example.com/app"));
        assert!(!is_label_key("Example.com/app"));
        assert!(!is_label_key("/app"));
        assert!(is_label_value(""));
        assert!(is_label_value("sandbox"));
        assert!(!is_label_value("/home/a/b"));
        assert!(!is_label_value(&"a".repeat(64)));
        assert!(!is_label_value("-a"));
    }

    #[test]
    fn paths_stay_annotations_only() {
        let pairs = BTreeMap::from([
            (
                "dev.container-isolation.managed".to_string(),
                "true".to_string(),
            ),
            (
                "dev.container-isolation.clone-path".to_string(),
                "/tmp/x".to_string(),
            ),
        ]);
        let (labels, annotations) = split_labels(&pairs);
        assert_eq!(labels.len(), 1);
        assert_eq!(annotations.len(), 2);
    }
}
