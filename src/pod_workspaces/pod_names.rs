//! The Pod of a session: a DNS-1123 name from the session id (lower-cased, `_` as `-`)
//! with a digest of the base directory and the exact id, so that ids differing only in case
//! or `_`/`-`, and two base directories on one namespace, never share a Pod.

use sha2::{Digest, Sha256};
use std::path::Path;

const PREFIX: &str = "cis-";
const MAX_NAME: usize = 63;

pub fn pod_name(base_dir: &Path, session_id: &str) -> String {
    let mut digest = Sha256::new();
    digest.update(base_dir.to_string_lossy().as_bytes());
    digest.update([0]);
    digest.update(session_id.as_bytes());
    let tag = &hex::encode(digest.finalize())[..8];
    let room = MAX_NAME - PREFIX.len() - tag.len() - 1;
    let readable: String = session_id
        .chars()
        .map(|c| match c {
            'A'..='Z' => c.to_ascii_lowercase(),
            'a'..='z' | '0'..='9' => c,
            _ => '-',
        })
        .take(room)
        .collect();
    format!("{PREFIX}{readable}-{tag}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_dns_label(name: &str) -> bool {
        name.len() <= 63
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && name.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    }

    #[test]
    fn names_are_dns_labels_and_tell_ids_apart() {
        let base = Path::new("/b");
        let long = format!("A{}", "_b".repeat(32));
        for id in ["a", "Task_1", "task-1", long.as_str(), "9"] {
            assert!(is_dns_label(&pod_name(base, id)), "{}", pod_name(base, id));
        }
        assert_ne!(pod_name(base, "Task_1"), pod_name(base, "task-1"));
        assert_ne!(pod_name(base, "a"), pod_name(Path::new("/c"), "a"));
        assert_eq!(pod_name(base, "a"), pod_name(base, "a"));
    }
}
