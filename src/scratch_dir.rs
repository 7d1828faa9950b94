//! Tests' scratch directories: a fresh folder under the temp directory, removed when
//! dropped.

use std::path::PathBuf;

pub struct Scratch(pub PathBuf);

impl Scratch {
    /// `$TMPDIR/ci-<tag>-<uuid>`, made.
    pub fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("ci-{tag}-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    /// `name` inside it.
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
