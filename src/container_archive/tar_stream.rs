//! Tar over the archive endpoints: a streaming reader for what `GET` returns (ustar, GNU
//! long names and PAX headers, as Docker and Podman write them), and the few archives `PUT`
//! needs (one file, or a chain of directories) with explicit owner, mode and a nanosecond
//! mtime.

use bytes::Bytes;
use futures_util::{Stream, StreamExt};

use crate::error::{Error, ErrorCode, Result};

const BLOCK: usize = 512;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TarEntry {
    pub path: String,
    pub typeflag: u8,
    pub size: u64,
}

impl TarEntry {
    pub fn is_regular(&self) -> bool {
        matches!(self.typeflag, b'0' | 0 | b'7')
    }

    pub fn is_dir(&self) -> bool {
        self.typeflag == b'5'
    }
}

/// Reads entries one after another from a byte stream, never holding more than one chunk.
pub struct TarReader<S> {
    stream: S,
    chunk: Bytes,
    subject: String,
}

impl<S, E> TarReader<S>
where
    S: Stream<Item = std::result::Result<Bytes, E>> + Unpin,
    E: Into<Error>,
{
    pub fn new(stream: S, subject: impl Into<String>) -> Self {
        TarReader {
            stream,
            chunk: Bytes::new(),
            subject: subject.into(),
        }
    }

    fn corrupt(&self, what: &str) -> Error {
        Error::new(
            ErrorCode::EngineError,
            format!(
                "{}: the engine sent a malformed archive ({what})",
                self.subject
            ),
        )
    }

    /// `false` at the end of the stream.
    async fn fill(&mut self) -> Result<bool> {
        while self.chunk.is_empty() {
            match self.stream.next().await {
                Some(Ok(bytes)) => self.chunk = bytes,
                Some(Err(err)) => return Err(err.into()),
                None => return Ok(false),
            }
        }
        Ok(true)
    }

    async fn read_exact(&mut self, out: &mut [u8]) -> Result<bool> {
        let mut filled = 0;
        while filled < out.len() {
            if !self.fill().await? {
                return if filled == 0 {
                    Ok(false)
                } else {
                    Err(self.corrupt("truncated block"))
                };
            }
            let take = (out.len() - filled).min(self.chunk.len());
            out[filled..filled + take].copy_from_slice(&self.chunk[..take]);
            self.chunk = self.chunk.slice(take..);
            filled += take;
        }
        Ok(true)
    }

    /// Hands `size` bytes of content to `sink` chunk by chunk, then skips the padding.
    pub async fn read_content(&mut self, size: u64, mut sink: impl FnMut(Bytes)) -> Result<()> {
        let mut left = size;
        while left > 0 {
            if !self.fill().await? {
                return Err(self.corrupt("truncated content"));
            }
            let take = (left.min(self.chunk.len() as u64)) as usize;
            sink(self.chunk.slice(..take));
            self.chunk = self.chunk.slice(take..);
            left -= take as u64;
        }
        let padding = (BLOCK - (size as usize % BLOCK)) % BLOCK;
        let mut pad = [0u8; BLOCK];
        if padding > 0 && !self.read_exact(&mut pad[..padding]).await? {
            return Err(self.corrupt("truncated padding"));
        }
        Ok(())
    }

    pub async fn skip_content(&mut self, size: u64) -> Result<()> {
        self.read_content(size, |_| {}).await
    }

    async fn read_small(&mut self, size: u64) -> Result<Vec<u8>> {
        if size > 1 << 20 {
            return Err(self.corrupt("oversized extended header"));
        }
        let mut data = Vec::with_capacity(size as usize);
        self.read_content(size, |b| data.extend_from_slice(&b))
            .await?;
        Ok(data)
    }

    /// The next file entry (extended headers applied), or `None` at the end.
    pub async fn next_entry(&mut self) -> Result<Option<TarEntry>> {
        let mut long_name: Option<String> = None;
        let mut pax_path: Option<String> = None;
        let mut pax_size: Option<u64> = None;
        loop {
            let mut header = [0u8; BLOCK];
            if !self.read_exact(&mut header).await? || header.iter().all(|&b| b == 0) {
                return Ok(None);
            }
            let typeflag = header[156];
            let size = parse_size(&header[124..136]).ok_or_else(|| self.corrupt("size"))?;
            match typeflag {
                b'L' => {
                    let data = self.read_small(size).await?;
                    long_name = Some(c_string(&data));
                }
                b'x' => {
                    let data = self.read_small(size).await?;
                    for (key, value) in pax_records(&data) {
                        match key.as_str() {
                            "path" => pax_path = Some(value),
                            "size" => pax_size = value.parse().ok(),
                            _ => {}
                        }
                    }
                }
                b'g' => self.skip_content(size).await?,
                _ => {
                    let name = c_string(&header[0..100]);
                    let prefix = if &header[257..262] == b"ustar" {
                        c_string(&header[345..500])
                    } else {
                        String::new()
                    };
                    let path = pax_path.or(long_name).unwrap_or_else(|| {
                        if prefix.is_empty() {
                            name
                        } else {
                            format!("{prefix}/{name}")
                        }
                    });
                    return Ok(Some(TarEntry {
                        path,
                        typeflag,
                        size: pax_size.unwrap_or(size),
                    }));
                }
            }
        }
    }
}

fn c_string(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// Octal, or GNU base-256 for large sizes.
fn parse_size(field: &[u8]) -> Option<u64> {
    if field[0] & 0x80 != 0 {
        let mut value: u64 = u64::from(field[0] & 0x7f);
        for &b in &field[1..] {
            value = value.checked_mul(256)?.checked_add(u64::from(b))?;
        }
        return Some(value);
    }
    let text = c_string(field);
    let text = text.trim();
    if text.is_empty() {
        return Some(0);
    }
    u64::from_str_radix(text, 8).ok()
}

/// PAX records: `<length> <key>=<value>\n`.
fn pax_records(data: &[u8]) -> Vec<(String, String)> {
    let mut records = Vec::new();
    let mut rest = data;
    while let Some(space) = rest.iter().position(|&b| b == b' ') {
        let Some(len) = std::str::from_utf8(&rest[..space])
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
        else {
            break;
        };
        if len == 0 || len > rest.len() || len <= space + 1 {
            break;
        }
        let record = &rest[space + 1..len];
        let record = record.strip_suffix(b"\n").unwrap_or(record);
        if let Some(eq) = record.iter().position(|&b| b == b'=') {
            records.push((
                String::from_utf8_lossy(&record[..eq]).into_owned(),
                String::from_utf8_lossy(&record[eq + 1..]).into_owned(),
            ));
        }
        rest = &rest[len..];
    }
    records
}

/// Ownership and permissions for entries we write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryOwner {
    pub uid: u32,
    pub gid: u32,
}

/// A PAX extended header (`x`) carrying `records` for the entry that follows it.
fn pax(records: &[(&str, &[u8])]) -> Result<Vec<u8>> {
    let mut data = Vec::new();
    for (key, value) in records {
        // "<len> <key>=<value>\n", where <len> counts its own digits too.
        let rest = key.len() + value.len() + 3;
        let mut len = rest + 1;
        while len != rest + len.to_string().len() {
            len = rest + len.to_string().len();
        }
        data.extend_from_slice(format!("{len} {key}=").as_bytes());
        data.extend_from_slice(value);
        data.push(b'\n');
    }
    let mut header = tar::Header::new_ustar();
    header.set_entry_type(tar::EntryType::XHeader);
    header
        .set_path("PaxHeader")
        .map_err(|e| Error::invalid_argument(format!("PAX header: {e}")))?;
    header.set_size(data.len() as u64);
    header.set_mode(0o644);
    header.set_cksum();
    let mut blocks = header.as_bytes().to_vec();
    blocks.extend_from_slice(&data);
    blocks.resize(blocks.len().div_ceil(BLOCK) * BLOCK, 0);
    Ok(blocks)
}

/// The header blocks of one entry: a PAX header with the modification time to the
/// nanosecond (the ustar field holds whole seconds, and tools compare mtimes to see whether
/// a file changed) and, for a path over 100 bytes, the path; then the ustar header.
fn header(
    path: &str,
    kind: tar::EntryType,
    size: u64,
    mode: u32,
    owner: EntryOwner,
) -> Result<Vec<u8>> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let mtime = format!("{}.{:09}", now.as_secs(), now.subsec_nanos());
    let mut records: Vec<(&str, &[u8])> = vec![("mtime", mtime.as_bytes())];
    let long = path.len() > 100;
    if long {
        records.push(("path", path.as_bytes()));
    }
    let mut blocks = pax(&records)?;
    let mut header = tar::Header::new_ustar();
    header.set_entry_type(kind);
    header.set_size(size);
    header.set_mode(mode);
    header.set_uid(u64::from(owner.uid));
    header.set_gid(u64::from(owner.gid));
    header.set_mtime(now.as_secs());
    if long {
        header.as_old_mut().name[..100].copy_from_slice(&path.as_bytes()[..100]);
    } else {
        header.set_path(path).map_err(|e| {
            Error::invalid_argument(format!("path '{path}' cannot be archived: {e}"))
        })?;
    }
    header.set_cksum();
    blocks.extend_from_slice(header.as_bytes());
    Ok(blocks)
}

/// A one-file archive, streamed: header, the content as given (not copied), padding, end.
pub fn single_file(name: &str, content: Bytes, mode: u32, owner: EntryOwner) -> Result<Vec<Bytes>> {
    let size = content.len() as u64;
    let head = header(name, tar::EntryType::Regular, size, mode, owner)?;
    let padding = (BLOCK - (content.len() % BLOCK)) % BLOCK;
    let mut tail = vec![0u8; padding + 2 * BLOCK];
    tail.truncate(padding + 2 * BLOCK);
    Ok(vec![Bytes::from(head), content, Bytes::from(tail)])
}

/// Directory entries for each of `paths` (relative, parents first).
pub fn directories(paths: &[String], mode: u32, owner: EntryOwner) -> Result<Bytes> {
    let mut archive = Vec::new();
    for path in paths {
        archive.extend(header(
            &format!("{path}/"),
            tar::EntryType::Directory,
            0,
            mode,
            owner,
        )?);
    }
    archive.extend(std::iter::repeat_n(0u8, 2 * BLOCK));
    Ok(Bytes::from(archive))
}

#[cfg(test)]
#[path = "tar_stream_tests.rs"]
mod tests;
