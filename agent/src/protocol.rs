//! The protocol between container-isolation and its agent: frames over the agent's stdin
//! and stdout, many requests in flight at once, data as raw bytes (no base64).
//!
//! A frame is a little-endian `u32` length (of everything after it), a `u32` request id
//! (chosen by the host; replies carry it), a `u8` message kind and the message's fields.
//! Either side treats the other's frames as untrusted: lengths are bounded, every field
//! is checked, and anything malformed is an error, never a panic.

use std::fmt;

pub const VERSION: u32 = 1;
/// The largest frame either side accepts (the length field's value).
pub const MAX_FRAME: usize = 1 << 20;
/// The data carried by one `Data`/`Output`/`Stdin` frame at most.
pub const CHUNK: usize = 256 * 1024;
/// Id of the connection's own messages (`Hello`).
pub const CONTROL: u32 = 0;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError(pub String);

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "agent protocol: {}", self.0)
    }
}

impl std::error::Error for ProtocolError {}

fn bad(what: impl Into<String>) -> ProtocolError {
    ProtocolError(what.into())
}

/// Who a command or file operation acts as.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Creds {
    pub uid: u32,
    pub gid: u32,
    pub groups: Vec<u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spawn {
    pub argv: Vec<String>,
    pub cwd: Option<String>,
    /// Replaces the agent's environment instead of adding to it.
    pub replace_env: bool,
    pub env: Vec<(String, String)>,
    pub creds: Creds,
    /// `HOME` for the command, unless `env` sets it.
    pub home: Option<String>,
    /// Whether the host will send stdin (else the command's stdin is `/dev/null`).
    pub stdin: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Missing,
    File,
    Dir,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub kind: FileKind,
    pub size: u64,
    pub mtime_sec: i64,
    pub mtime_nsec: u32,
    pub mode: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    // Host to agent.
    Hello {
        version: u32,
    },
    Spawn(Spawn),
    Stdin(Vec<u8>),
    StdinEnd,
    /// Signals every process of the command (its reaper's whole subtree).
    Signal {
        signo: i32,
    },
    /// Stops and kills every process of the command until none is left.
    Kill,
    StatPath {
        path: String,
        follow: bool,
        creds: Creds,
    },
    Read {
        path: String,
        creds: Creds,
    },
    /// Followed by `Data` frames and `End`; the file appears whole or not at all.
    Write {
        path: String,
        creds: Creds,
    },
    /// Abandons a `Write` (nothing of it remains).
    Abort,
    Mkdir {
        path: String,
        creds: Creds,
    },
    ReadDir {
        path: String,
        creds: Creds,
    },
    // Agent to host.
    Welcome {
        version: u32,
        pid: u32,
    },
    Done,
    Failed {
        errno: i32,
        message: String,
    },
    Spawned {
        pid: u32,
    },
    Output {
        stderr: bool,
        data: Vec<u8>,
    },
    Exited {
        code: i32,
        signal: i32,
    },
    Signalled {
        count: u32,
    },
    Stat(Stat),
    Names(Vec<String>),
    // Either way.
    Data(Vec<u8>),
    End,
}

struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i32(&mut self, v: i32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, v: &[u8]) {
        self.u32(v.len() as u32);
        self.0.extend_from_slice(v);
    }
    fn str(&mut self, v: &str) {
        self.bytes(v.as_bytes());
    }
    fn strs(&mut self, v: &[String]) {
        self.u32(v.len() as u32);
        v.iter().for_each(|s| self.str(s));
    }
    fn creds(&mut self, c: &Creds) {
        self.u32(c.uid);
        self.u32(c.gid);
        self.u32(c.groups.len() as u32);
        c.groups.iter().for_each(|g| self.u32(*g));
    }
}

struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], ProtocolError> {
        if self.buf.len() < n {
            return Err(bad("a frame ends inside a field"));
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, ProtocolError> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, ProtocolError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn i32(&mut self) -> Result<i32, ProtocolError> {
        Ok(i32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn i64(&mut self) -> Result<i64, ProtocolError> {
        Ok(i64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Result<u64, ProtocolError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn bool(&mut self) -> Result<bool, ProtocolError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(bad(format!("{other} is not a boolean"))),
        }
    }
    fn bytes(&mut self) -> Result<Vec<u8>, ProtocolError> {
        let n = self.u32()? as usize;
        Ok(self.take(n)?.to_vec())
    }
    fn str(&mut self) -> Result<String, ProtocolError> {
        String::from_utf8(self.bytes()?).map_err(|_| bad("a string is not UTF-8"))
    }
    /// A count, checked against what is left (each item takes at least `min` bytes).
    fn count(&mut self, min: usize) -> Result<usize, ProtocolError> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min) > self.buf.len() {
            return Err(bad("a count exceeds the frame"));
        }
        Ok(n)
    }
    fn strs(&mut self) -> Result<Vec<String>, ProtocolError> {
        (0..self.count(4)?).map(|_| self.str()).collect()
    }
    fn creds(&mut self) -> Result<Creds, ProtocolError> {
        let (uid, gid) = (self.u32()?, self.u32()?);
        let groups = (0..self.count(4)?)
            .map(|_| self.u32())
            .collect::<Result<_, _>>()?;
        Ok(Creds { uid, gid, groups })
    }
    fn optional(&mut self) -> Result<Option<String>, ProtocolError> {
        if self.bool()? {
            self.str().map(Some)
        } else {
            Ok(None)
        }
    }
}

fn kind_of(kind: FileKind) -> u8 {
    match kind {
        FileKind::Missing => 0,
        FileKind::File => 1,
        FileKind::Dir => 2,
        FileKind::Other => 3,
    }
}

impl Message {
    fn code(&self) -> u8 {
        match self {
            Message::Hello { .. } => 1,
            Message::Spawn(_) => 2,
            Message::Stdin(_) => 3,
            Message::StdinEnd => 4,
            Message::Signal { .. } => 5,
            Message::Kill => 6,
            Message::StatPath { .. } => 7,
            Message::Read { .. } => 8,
            Message::Write { .. } => 9,
            Message::Abort => 10,
            Message::Mkdir { .. } => 11,
            Message::ReadDir { .. } => 12,
            Message::Welcome { .. } => 32,
            Message::Done => 33,
            Message::Failed { .. } => 34,
            Message::Spawned { .. } => 35,
            Message::Output { .. } => 36,
            Message::Exited { .. } => 37,
            Message::Signalled { .. } => 38,
            Message::Stat(_) => 39,
            Message::Names(_) => 40,
            Message::Data(_) => 64,
            Message::End => 65,
        }
    }

    fn write_fields(&self, w: &mut Writer) {
        match self {
            Message::Hello { version } | Message::Welcome { version, .. } => {
                w.u32(*version);
                if let Message::Welcome { pid, .. } = self {
                    w.u32(*pid);
                }
            }
            Message::Spawn(s) => {
                w.strs(&s.argv);
                w.u8(s.cwd.is_some() as u8);
                if let Some(cwd) = &s.cwd {
                    w.str(cwd);
                }
                w.u8(s.replace_env as u8);
                w.u32(s.env.len() as u32);
                for (k, v) in &s.env {
                    w.str(k);
                    w.str(v);
                }
                w.creds(&s.creds);
                w.u8(s.home.is_some() as u8);
                if let Some(home) = &s.home {
                    w.str(home);
                }
                w.u8(s.stdin as u8);
            }
            Message::Stdin(data) | Message::Data(data) => w.bytes(data),
            Message::Signal { signo } => w.i32(*signo),
            Message::StatPath {
                path,
                follow,
                creds,
            } => {
                w.str(path);
                w.u8(*follow as u8);
                w.creds(creds);
            }
            Message::Read { path, creds }
            | Message::Write { path, creds }
            | Message::Mkdir { path, creds }
            | Message::ReadDir { path, creds } => {
                w.str(path);
                w.creds(creds);
            }
            Message::Failed { errno, message } => {
                w.i32(*errno);
                w.str(message);
            }
            Message::Spawned { pid } => w.u32(*pid),
            Message::Output { stderr, data } => {
                w.u8(*stderr as u8);
                w.bytes(data);
            }
            Message::Exited { code, signal } => {
                w.i32(*code);
                w.i32(*signal);
            }
            Message::Signalled { count } => w.u32(*count),
            Message::Stat(s) => {
                w.u8(kind_of(s.kind));
                w.u64(s.size);
                w.i64(s.mtime_sec);
                w.u32(s.mtime_nsec);
                w.u32(s.mode);
            }
            Message::Names(names) => w.strs(names),
            Message::StdinEnd | Message::Kill | Message::Abort | Message::Done | Message::End => {}
        }
    }

    fn read_fields(code: u8, r: &mut Reader<'_>) -> Result<Message, ProtocolError> {
        Ok(match code {
            1 => Message::Hello { version: r.u32()? },
            2 => {
                let argv = r.strs()?;
                let cwd = r.optional()?;
                let replace_env = r.bool()?;
                let env = (0..r.count(8)?)
                    .map(|_| Ok((r.str()?, r.str()?)))
                    .collect::<Result<_, ProtocolError>>()?;
                let creds = r.creds()?;
                let home = r.optional()?;
                Message::Spawn(Spawn {
                    argv,
                    cwd,
                    replace_env,
                    env,
                    creds,
                    home,
                    stdin: r.bool()?,
                })
            }
            3 => Message::Stdin(r.bytes()?),
            4 => Message::StdinEnd,
            5 => Message::Signal { signo: r.i32()? },
            6 => Message::Kill,
            7 => Message::StatPath {
                path: r.str()?,
                follow: r.bool()?,
                creds: r.creds()?,
            },
            8 | 9 | 11 | 12 => {
                let (path, creds) = (r.str()?, r.creds()?);
                match code {
                    8 => Message::Read { path, creds },
                    9 => Message::Write { path, creds },
                    11 => Message::Mkdir { path, creds },
                    _ => Message::ReadDir { path, creds },
                }
            }
            10 => Message::Abort,
            32 => Message::Welcome {
                version: r.u32()?,
                pid: r.u32()?,
            },
            33 => Message::Done,
            34 => Message::Failed {
                errno: r.i32()?,
                message: r.str()?,
            },
            35 => Message::Spawned { pid: r.u32()? },
            36 => Message::Output {
                stderr: r.bool()?,
                data: r.bytes()?,
            },
            37 => Message::Exited {
                code: r.i32()?,
                signal: r.i32()?,
            },
            38 => Message::Signalled { count: r.u32()? },
            39 => Message::Stat(Stat {
                kind: match r.u8()? {
                    0 => FileKind::Missing,
                    1 => FileKind::File,
                    2 => FileKind::Dir,
                    3 => FileKind::Other,
                    other => return Err(bad(format!("file kind {other}"))),
                },
                size: r.u64()?,
                mtime_sec: r.i64()?,
                mtime_nsec: r.u32()?,
                mode: r.u32()?,
            }),
            40 => Message::Names(r.strs()?),
            64 => Message::Data(r.bytes()?),
            65 => Message::End,
            other => return Err(bad(format!("unknown message kind {other}"))),
        })
    }
}

/// The bytes of one frame.
pub fn encode(id: u32, message: &Message) -> Vec<u8> {
    let mut w = Writer(Vec::with_capacity(16));
    w.u32(0);
    w.u32(id);
    w.u8(message.code());
    message.write_fields(&mut w);
    let length = (w.0.len() - 4) as u32;
    w.0[..4].copy_from_slice(&length.to_le_bytes());
    w.0
}

/// One frame's body (after the length field): its id and message. Bytes left over after
/// the message's fields are an error.
pub fn decode(body: &[u8]) -> Result<(u32, Message), ProtocolError> {
    let mut r = Reader { buf: body };
    let id = r.u32()?;
    let code = r.u8()?;
    let message = Message::read_fields(code, &mut r)?;
    if !r.buf.is_empty() {
        return Err(bad("bytes after a message's fields"));
    }
    Ok((id, message))
}

/// Collects frames from a byte stream that arrives in arbitrary pieces.
#[derive(Default)]
pub struct FrameBuffer {
    buf: Vec<u8>,
    start: usize,
}

impl FrameBuffer {
    pub fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole frame, `None` until one has arrived; an oversized length is an error.
    pub fn next_frame(&mut self) -> Option<Result<(u32, Message), ProtocolError>> {
        let pending = &self.buf[self.start..];
        if pending.len() < 4 {
            return None;
        }
        let length = u32::from_le_bytes(pending[..4].try_into().unwrap()) as usize;
        if length > MAX_FRAME {
            return Some(Err(bad(format!("a frame of {length} bytes"))));
        }
        if pending.len() < 4 + length {
            return None;
        }
        let frame = decode(&pending[4..4 + length]);
        self.start += 4 + length;
        if self.start > self.buf.len() / 2 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        Some(frame)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<Message> {
        let creds = Creds {
            uid: 1000,
            gid: 1000,
            groups: vec![27, 100],
        };
        vec![
            Message::Hello { version: VERSION },
            Message::Spawn(Spawn {
                argv: vec!["sh".into(), "-c".into(), "echo é".into()],
                cwd: Some("/workspace".into()),
                replace_env: true,
                env: vec![("A".into(), "b=c".into())],
                creds: creds.clone(),
                home: Some("/home/agent".into()),
                stdin: true,
            }),
            Message::Stdin(vec![0, 255, 10]),
            Message::StdinEnd,
            Message::Signal { signo: 15 },
            Message::Kill,
            Message::StatPath {
                path: "/a".into(),
                follow: true,
                creds: creds.clone(),
            },
            Message::Read {
                path: "/r".into(),
                creds: creds.clone(),
            },
            Message::Write {
                path: "/w".into(),
                creds: creds.clone(),
            },
            Message::Abort,
            Message::Mkdir {
                path: "/m".into(),
                creds: creds.clone(),
            },
            Message::ReadDir {
                path: "/d".into(),
                creds,
            },
            Message::Welcome { version: 1, pid: 7 },
            Message::Done,
            Message::Failed {
                errno: 2,
                message: "no such file".into(),
            },
            Message::Spawned { pid: 42 },
            Message::Output {
                stderr: true,
                data: b"x\n".to_vec(),
            },
            Message::Exited { code: 0, signal: 9 },
            Message::Signalled { count: 3 },
            Message::Stat(Stat {
                kind: FileKind::Dir,
                size: 4096,
                mtime_sec: -1,
                mtime_nsec: 999_999_999,
                mode: 0o755,
            }),
            Message::Names(vec![".hidden".into(), "b".into()]),
            Message::Data(vec![1; 1000]),
            Message::End,
        ]
    }

    #[test]
    fn every_message_round_trips_through_a_byte_stream_cut_anywhere() {
        let messages = all();
        let bytes: Vec<u8> = messages
            .iter()
            .enumerate()
            .flat_map(|(i, m)| encode(i as u32, m))
            .collect();
        for piece in [1, 3, 7, 64, bytes.len()] {
            let mut frames = FrameBuffer::default();
            let mut got = Vec::new();
            for chunk in bytes.chunks(piece) {
                frames.push(chunk);
                while let Some(frame) = frames.next_frame() {
                    got.push(frame.unwrap());
                }
            }
            let expected: Vec<_> = messages
                .iter()
                .cloned()
                .enumerate()
                .map(|(i, m)| (i as u32, m))
                .collect();
            assert_eq!(got, expected, "pieces of {piece}");
        }
    }

    #[test]
    fn malformed_frames_are_errors_not_panics() {
        let mut frames = FrameBuffer::default();
        frames.push(&((MAX_FRAME + 1) as u32).to_le_bytes());
        assert!(frames.next_frame().unwrap().is_err());
        for body in [
            vec![0, 0, 0, 0, 200],
            vec![0, 0, 0, 0, 3, 255, 255, 255, 255],
            vec![0, 0, 0, 0, 40, 255, 255, 255, 255],
            vec![0, 0, 0, 0, 5, 1, 0, 0, 0, 9],
            vec![0, 0, 0, 0, 36, 2, 0, 0, 0, 0],
            vec![0, 0],
        ] {
            assert!(decode(&body).is_err(), "{body:?}");
        }
    }
}
