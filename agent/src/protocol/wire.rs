//! The field primitives of a frame: little-endian integers, booleans as one byte,
//! length-prefixed bytes and strings, counted lists. `Reader` checks every length against
//! what is left of the frame, so a lying count is an error before anything is allocated.

use super::message::Creds;
use super::{bad, ProtocolError};

pub(super) struct Writer(pub(super) Vec<u8>);

impl Writer {
    pub(super) fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub(super) fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(super) fn i32(&mut self, v: i32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(super) fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(super) fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(super) fn bool(&mut self, v: bool) {
        self.u8(v as u8);
    }
    pub(super) fn bytes(&mut self, v: &[u8]) {
        self.u32(v.len() as u32);
        self.0.extend_from_slice(v);
    }
    pub(super) fn str(&mut self, v: &str) {
        self.bytes(v.as_bytes());
    }
    pub(super) fn strs(&mut self, v: &[String]) {
        self.u32(v.len() as u32);
        v.iter().for_each(|s| self.str(s));
    }
    pub(super) fn optional(&mut self, v: Option<&str>) {
        self.bool(v.is_some());
        if let Some(v) = v {
            self.str(v);
        }
    }
    pub(super) fn creds(&mut self, c: &Creds) {
        self.u32(c.uid);
        self.u32(c.gid);
        self.u32(c.groups.len() as u32);
        c.groups.iter().for_each(|g| self.u32(*g));
    }
}

pub(super) struct Reader<'a> {
    pub(super) buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8], ProtocolError> {
        if self.buf.len() < n {
            return Err(bad("a frame ends inside a field"));
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }
    pub(super) fn u8(&mut self) -> Result<u8, ProtocolError> {
        Ok(self.take(1)?[0])
    }
    pub(super) fn u32(&mut self) -> Result<u32, ProtocolError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    pub(super) fn i32(&mut self) -> Result<i32, ProtocolError> {
        Ok(i32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    pub(super) fn i64(&mut self) -> Result<i64, ProtocolError> {
        Ok(i64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    pub(super) fn u64(&mut self) -> Result<u64, ProtocolError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    pub(super) fn bool(&mut self) -> Result<bool, ProtocolError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(bad(format!("{other} is not a boolean"))),
        }
    }
    pub(super) fn bytes(&mut self) -> Result<Vec<u8>, ProtocolError> {
        let n = self.u32()? as usize;
        Ok(self.take(n)?.to_vec())
    }
    pub(super) fn str(&mut self) -> Result<String, ProtocolError> {
        String::from_utf8(self.bytes()?).map_err(|_| bad("a string is not UTF-8"))
    }
    /// A count, checked against what is left (each item takes at least `min` bytes).
    pub(super) fn count(&mut self, min: usize) -> Result<usize, ProtocolError> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min) > self.buf.len() {
            return Err(bad("a count exceeds the frame"));
        }
        Ok(n)
    }
    pub(super) fn strs(&mut self) -> Result<Vec<String>, ProtocolError> {
        (0..self.count(4)?).map(|_| self.str()).collect()
    }
    pub(super) fn creds(&mut self) -> Result<Creds, ProtocolError> {
        let (uid, gid) = (self.u32()?, self.u32()?);
        let groups = (0..self.count(4)?)
            .map(|_| self.u32())
            .collect::<Result<_, _>>()?;
        Ok(Creds { uid, gid, groups })
    }
    pub(super) fn optional(&mut self) -> Result<Option<String>, ProtocolError> {
        if self.bool()? {
            self.str().map(Some)
        } else {
            Ok(None)
        }
    }
}
