//! Checked objects written as one pack (version 2, whole objects, no deltas) through
//! libgit2's indexer into a repository's object database: one `.pack` and its `.idx`
//! instead of a loose file per object, made visible only once complete. The indexer
//! inflates and hashes every entry again, so what lands is what the ids say.

use std::io::Write;

use flate2::write::ZlibEncoder;
use flate2::Compression;
use git2::{ObjectType, Odb};
use sha1::{Digest, Sha1};

use crate::error::{Error, ErrorCode, Result};

fn type_code(kind: ObjectType) -> u8 {
    match kind {
        ObjectType::Commit => 1,
        ObjectType::Tree => 2,
        ObjectType::Blob => 3,
        _ => 4,
    }
}

/// The entry header: the type and the inflated size, seven bits a byte after the first
/// four.
fn entry_header(kind: ObjectType, size: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(10);
    let mut size = size as u64;
    let mut byte = (type_code(kind) << 4) | (size & 0x0f) as u8;
    size >>= 4;
    while size > 0 {
        out.push(byte | 0x80);
        byte = (size & 0x7f) as u8;
        size >>= 7;
    }
    out.push(byte);
    out
}

/// A pack being written: everything also goes through the hash of its trailer.
pub struct PackFile<'odb> {
    out: git2::OdbPackwriter<'odb>,
    hash: Sha1,
    left: usize,
}

fn io(err: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::Git, format!("writing a pack: {err}"))
}

impl<'odb> PackFile<'odb> {
    /// A pack of exactly `count` objects into `odb`.
    pub fn new(odb: &'odb Odb, count: usize) -> Result<Self> {
        let out = odb
            .packwriter()
            .map_err(|e| Error::git("a pack writer", e))?;
        let mut pack = PackFile {
            out,
            hash: Sha1::new(),
            left: count,
        };
        let mut header = b"PACK".to_vec();
        header.extend_from_slice(&2u32.to_be_bytes());
        header.extend_from_slice(&(count as u32).to_be_bytes());
        pack.put(&header)?;
        Ok(pack)
    }

    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.hash.update(bytes);
        self.out.write_all(bytes).map_err(io)
    }

    pub fn add(&mut self, kind: ObjectType, data: &[u8]) -> Result<()> {
        self.left = self
            .left
            .checked_sub(1)
            .ok_or_else(|| io("more objects than announced"))?;
        self.put(&entry_header(kind, data.len()))?;
        let mut zlib =
            ZlibEncoder::new(Vec::with_capacity(data.len() / 2 + 64), Compression::fast());
        zlib.write_all(data).map_err(io)?;
        let deflated = zlib.finish().map_err(io)?;
        self.put(&deflated)
    }

    /// The trailer, then the index: the pack is in the database from here on.
    pub fn finish(mut self) -> Result<()> {
        if self.left != 0 {
            return Err(io("fewer objects than announced"));
        }
        let trailer = self.hash.finalize_reset();
        self.out.write_all(&trailer).map_err(io)?;
        self.out
            .commit()
            .map(|_| ())
            .map_err(|e| Error::git("indexing a pack", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_four_bits_then_seven_a_byte() {
        assert_eq!(entry_header(ObjectType::Blob, 5), [0x35]);
        assert_eq!(entry_header(ObjectType::Commit, 16), [0x90, 0x01]);
        assert_eq!(entry_header(ObjectType::Tree, 300), [0xac, 0x12]);
    }

    #[test]
    fn a_pack_of_written_objects_is_read_back() {
        let dir = std::env::temp_dir().join(format!("ci-pack-{}", uuid::Uuid::new_v4()));
        let repo = git2::Repository::init_bare(&dir).unwrap();
        let odb = repo.odb().unwrap();
        let big = vec![7u8; 100_000];
        let objects: Vec<(ObjectType, &[u8])> = vec![
            (ObjectType::Blob, b"hello\n"),
            (ObjectType::Blob, &big),
            (ObjectType::Blob, b""),
        ];
        let mut pack = PackFile::new(&odb, objects.len()).unwrap();
        for (kind, data) in &objects {
            pack.add(*kind, data).unwrap();
        }
        pack.finish().unwrap();
        for (kind, data) in &objects {
            let id = git2::Oid::hash_object(*kind, data).unwrap();
            assert_eq!(odb.read(id).unwrap().data(), *data);
        }
        let packs = std::fs::read_dir(dir.join("objects/pack")).unwrap().count();
        assert!(packs >= 2, "a .pack and its .idx");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
