//! A message as bytes: each kind's code and fields, `encode` for a whole frame and
//! `decode` for a frame's body. Bytes left over after a message's fields are an error.

use super::message::{Creds, FileKind, Message, Spawn, Stat};
use super::wire::{Reader, Writer};
use super::{bad, ProtocolError};

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

/// The bytes of a `Data` frame before its payload: length, id, kind, payload length.
pub const DATA_HEADER: usize = 13;

/// The header of a `Data` frame of `id` carrying `len` bytes, for a sender that reads the
/// payload straight into the frame (`encode` would copy it once more).
pub fn data_header(id: u32, len: usize) -> [u8; DATA_HEADER] {
    let mut header = [0u8; DATA_HEADER];
    header[..4].copy_from_slice(&((DATA_HEADER - 4 + len) as u32).to_le_bytes());
    header[4..8].copy_from_slice(&id.to_le_bytes());
    header[8] = Message::Data(Vec::new()).code();
    header[9..].copy_from_slice(&(len as u32).to_le_bytes());
    header
}

/// The bytes of an `Output` frame before its data: length, id, kind, stream, data length.
pub const OUTPUT_HEADER: usize = 14;

/// The header of an `Output` frame of `id` carrying `len` bytes of `stderr` or stdout, for a
/// sender that reads the output straight into the frame.
pub fn output_header(id: u32, stderr: bool, len: usize) -> [u8; OUTPUT_HEADER] {
    let mut header = [0u8; OUTPUT_HEADER];
    header[..4].copy_from_slice(&((OUTPUT_HEADER - 4 + len) as u32).to_le_bytes());
    header[4..8].copy_from_slice(&id.to_le_bytes());
    header[8] = Message::Output {
        stderr,
        data: Vec::new(),
    }
    .code();
    header[9] = stderr as u8;
    header[10..].copy_from_slice(&(len as u32).to_le_bytes());
    header
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

fn kind_code(kind: FileKind) -> u8 {
    match kind {
        FileKind::Missing => 0,
        FileKind::File => 1,
        FileKind::Dir => 2,
        FileKind::Other => 3,
    }
}

fn kind_of(code: u8) -> Result<FileKind, ProtocolError> {
    Ok(match code {
        0 => FileKind::Missing,
        1 => FileKind::File,
        2 => FileKind::Dir,
        3 => FileKind::Other,
        other => return Err(bad(format!("file kind {other}"))),
    })
}

fn write_spawn(w: &mut Writer, s: &Spawn) {
    w.strs(&s.argv);
    w.optional(s.cwd.as_deref());
    w.bool(s.replace_env);
    w.u32(s.env.len() as u32);
    for (k, v) in &s.env {
        w.str(k);
        w.str(v);
    }
    w.creds(&s.creds);
    w.optional(s.home.as_deref());
    w.bool(s.stdin);
}

fn read_spawn(r: &mut Reader<'_>) -> Result<Spawn, ProtocolError> {
    let argv = r.strs()?;
    let cwd = r.optional()?;
    let replace_env = r.bool()?;
    let env = (0..r.count(8)?)
        .map(|_| Ok((r.str()?, r.str()?)))
        .collect::<Result<_, ProtocolError>>()?;
    let creds = r.creds()?;
    let home = r.optional()?;
    Ok(Spawn {
        argv,
        cwd,
        replace_env,
        env,
        creds,
        home,
        stdin: r.bool()?,
    })
}

/// A terminal's width or height: 1 to 65535.
fn size(r: &mut Reader<'_>) -> Result<u16, ProtocolError> {
    u16::try_from(r.u32()?)
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| bad("a terminal size outside 1..=65535"))
}

fn write_stat(w: &mut Writer, s: &Stat) {
    w.u8(kind_code(s.kind));
    w.u64(s.size);
    w.i64(s.mtime_sec);
    w.u32(s.mtime_nsec);
    w.u32(s.mode);
}

fn read_stat(r: &mut Reader<'_>) -> Result<Stat, ProtocolError> {
    Ok(Stat {
        kind: kind_of(r.u8()?)?,
        size: r.u64()?,
        mtime_sec: r.i64()?,
        mtime_nsec: r.u32()?,
        mode: r.u32()?,
    })
}

/// The messages made of a path and the user to act as, by code.
fn path_message(code: u8, path: String, creds: Creds) -> Message {
    match code {
        8 => Message::Read { path, creds },
        9 => Message::Write { path, creds },
        11 => Message::Mkdir { path, creds },
        _ => Message::ReadDir { path, creds },
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
            Message::Dial { .. } => 13,
            Message::Ping => 14,
            Message::Line { .. } => 15,
            Message::Terminal { .. } => 16,
            Message::Resize { .. } => 17,
            Message::Welcome { .. } => 32,
            Message::Done => 33,
            Message::Failed { .. } => 34,
            Message::Spawned { .. } => 35,
            Message::Output { .. } => 36,
            Message::Exited { .. } => 37,
            Message::Signalled { .. } => 38,
            Message::Stat(_) => 39,
            Message::Names(_) => 40,
            Message::Accepted { .. } => 41,
            Message::Pong => 42,
            Message::Join { .. } => 43,
            Message::Data(_) => 64,
            Message::End => 65,
            Message::Credit { .. } => 66,
        }
    }

    fn write_fields(&self, w: &mut Writer) {
        match self {
            Message::Hello { version } => w.u32(*version),
            Message::Welcome { version, pid } => {
                w.u32(*version);
                w.u32(*pid);
            }
            Message::Spawn(s) => write_spawn(w, s),
            Message::Stdin(data) | Message::Data(data) => w.bytes(data),
            Message::Signal { signo } => w.i32(*signo),
            Message::StatPath {
                path,
                follow,
                creds,
            } => {
                w.str(path);
                w.bool(*follow);
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
                w.bool(*stderr);
                w.bytes(data);
            }
            Message::Exited { code, signal } => {
                w.i32(*code);
                w.i32(*signal);
            }
            Message::Signalled { count } => w.u32(*count),
            Message::Dial { port } => w.u32(u32::from(*port)),
            Message::Accepted { listener } => w.u8(*listener),
            Message::Credit { bytes } => w.u32(*bytes),
            Message::Stat(s) => write_stat(w, s),
            Message::Names(names) => w.strs(names),
            Message::Line { path, token } => {
                w.str(path);
                w.bytes(token);
            }
            Message::Join { token } => w.bytes(token),
            Message::Terminal {
                spawn,
                cols,
                rows,
                acks,
            } => {
                write_spawn(w, spawn);
                w.u32(u32::from(*cols));
                w.u32(u32::from(*rows));
                w.u32(*acks);
            }
            Message::Resize { cols, rows } => {
                w.u32(u32::from(*cols));
                w.u32(u32::from(*rows));
            }
            Message::StdinEnd
            | Message::Kill
            | Message::Abort
            | Message::Done
            | Message::End
            | Message::Ping
            | Message::Pong => {}
        }
    }

    fn read_fields(code: u8, r: &mut Reader<'_>) -> Result<Message, ProtocolError> {
        Ok(match code {
            1 => Message::Hello { version: r.u32()? },
            2 => Message::Spawn(read_spawn(r)?),
            3 => Message::Stdin(r.bytes()?),
            4 => Message::StdinEnd,
            5 => Message::Signal { signo: r.i32()? },
            6 => Message::Kill,
            7 => Message::StatPath {
                path: r.str()?,
                follow: r.bool()?,
                creds: r.creds()?,
            },
            8 | 9 | 11 | 12 => path_message(code, r.str()?, r.creds()?),
            10 => Message::Abort,
            13 => Message::Dial {
                port: u16::try_from(r.u32()?).map_err(|_| bad("a port above 65535"))?,
            },
            14 => Message::Ping,
            15 => Message::Line {
                path: r.str()?,
                token: r.bytes()?,
            },
            16 => Message::Terminal {
                spawn: read_spawn(r)?,
                cols: size(r)?,
                rows: size(r)?,
                acks: r.u32()?,
            },
            17 => Message::Resize {
                cols: size(r)?,
                rows: size(r)?,
            },
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
            39 => Message::Stat(read_stat(r)?),
            40 => Message::Names(r.strs()?),
            41 => Message::Accepted { listener: r.u8()? },
            42 => Message::Pong,
            43 => Message::Join { token: r.bytes()? },
            64 => Message::Data(r.bytes()?),
            65 => Message::End,
            66 => Message::Credit { bytes: r.u32()? },
            other => return Err(bad(format!("unknown message kind {other}"))),
        })
    }
}
