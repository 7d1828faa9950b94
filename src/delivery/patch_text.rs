//! The unified diff of a session's changes, cut at a byte bound: whole files while they
//! fit, then the part of the next one that does, ending at a line.

use git2::{DiffDelta, Patch};

use crate::error::{Error, ErrorCode, Result};

/// 1 MiB when the caller gives no bound.
pub const DEFAULT_MAX_PATCH_BYTES: usize = 1 << 20;

pub struct PatchText {
    max: usize,
    text: Vec<u8>,
    truncated: bool,
}

fn path_of(delta: &DiffDelta, new: bool) -> String {
    let file = if new {
        delta.new_file()
    } else {
        delta.old_file()
    };
    file.path_bytes()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .unwrap_or_default()
}

impl PatchText {
    pub fn new(max: usize) -> PatchText {
        PatchText {
            max,
            text: Vec::new(),
            truncated: false,
        }
    }

    /// How many more bytes fit; none once the text was cut.
    pub fn room(&self) -> usize {
        match self.truncated {
            true => 0,
            false => self.max.saturating_sub(self.text.len()),
        }
    }

    /// Whether more text is still wanted.
    pub fn open(&self) -> bool {
        !self.truncated
    }

    /// Appends one file's patch.
    pub fn push_patch(&mut self, patch: &mut Patch) -> Result<()> {
        if self.truncated {
            return Ok(());
        }
        let buf = patch
            .to_buf()
            .map_err(|e| Error::new(ErrorCode::Git, format!("patch: {}", e.message())))?;
        self.push(&buf);
        Ok(())
    }

    /// Appends what git prints for a binary file, for one over the blob bound (never
    /// loaded).
    pub fn push_oversized(&mut self, delta: &DiffDelta) {
        let (old, new) = (path_of(delta, false), path_of(delta, true));
        let text = format!("diff --git a/{old} b/{new}\nBinary files a/{old} and b/{new} differ\n");
        self.push(text.as_bytes());
    }

    fn push(&mut self, bytes: &[u8]) {
        let room = self.max.saturating_sub(self.text.len());
        if bytes.len() <= room {
            self.text.extend_from_slice(bytes);
            return;
        }
        let cut = bytes[..room]
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        self.text.extend_from_slice(&bytes[..cut]);
        self.truncated = true;
    }

    /// The text (invalid UTF-8 replaced) and whether it was cut.
    pub fn finish(self) -> (String, bool) {
        let text = match String::from_utf8(self.text) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        (text, self.truncated)
    }
}
