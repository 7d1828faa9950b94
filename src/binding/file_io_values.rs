//! What the `FileIO` classes (`DockerFileIO`, `KubernetesFileIO`) hand JavaScript: text as
//! Node's `readFile(path, 'utf8')` gives it, contents as bytes, stats or `undefined`.

use napi::bindgen_prelude::{Buffer, Either, Undefined};
use napi_derive::napi;

/// What `FileIO.stat` reports.
#[napi(object)]
pub struct FileStat {
    /// Last modification, in Unix milliseconds.
    pub mtime_ms: f64,
    /// In bytes.
    pub size: f64,
}

/// UTF-8, invalid sequences replaced.
pub fn text_of(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
    }
}

/// A string's UTF-8 bytes or a buffer's, without a copy.
pub fn content_bytes(content: Either<String, Buffer>) -> bytes::Bytes {
    match content {
        Either::A(text) => bytes::Bytes::from(text.into_bytes()),
        Either::B(buffer) => bytes::Bytes::from_owner(buffer),
    }
}

/// A found path's stat, `undefined` for a missing one.
pub fn stat_value(found: Option<(f64, u64)>) -> Either<FileStat, Undefined> {
    match found {
        Some((mtime_ms, size)) => Either::A(FileStat {
            mtime_ms,
            size: size as f64,
        }),
        None => Either::B(()),
    }
}
