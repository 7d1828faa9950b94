//! The key of a set of settings: a digest of everything its containers are made from, so
//! that two sets with one key make interchangeable members.

use sha2::{Digest, Sha256};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PoolKey(String);

impl PoolKey {
    /// The digest of `parts`, each one length-prefixed (no two lists of parts collide by
    /// moving text from one part to the next).
    pub fn of(parts: &[&str]) -> PoolKey {
        let mut hash = Sha256::new();
        for part in parts {
            hash.update((part.len() as u64).to_le_bytes());
            hash.update(part.as_bytes());
        }
        PoolKey(hex::encode(hash.finalize())[..24].to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_kept_apart() {
        assert_eq!(PoolKey::of(&["a", "b"]), PoolKey::of(&["a", "b"]));
        assert_ne!(PoolKey::of(&["ab", ""]), PoolKey::of(&["a", "b"]));
        assert_eq!(PoolKey::of(&["x"]).as_str().len(), 24);
    }
}
