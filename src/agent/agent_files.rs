//! File operations carried out by the agent inside the container, as the caller's user, so
//! permissions are the container kernel's and tmpfs mounts are seen. Replies are bounded:
//! a read stops at the size the file had plus a margin, a listing at a number of names.

use std::sync::Arc;

use container_isolation_agent::protocol::{Creds, FileKind, Message, Stat, CHUNK};

use super::agent_connection::AgentConnection;
use super::agent_errors::{errno_error, unexpected};
use crate::error::{Error, ErrorCode, Result};

/// How much a file may grow while it is read before the read gives up (`EFBIG`).
const READ_GROWTH: u64 = 64 << 20;
/// The most names one listing returns.
const MAX_NAMES: usize = 1 << 20;

/// The agent's answer, or that the engine path should answer instead (a file the agent
/// does not open: a device, FIFO or pseudo-file).
pub enum AgentReply<T> {
    Done(T),
    NotRegular,
}

pub struct AgentFiles {
    pub connection: Arc<AgentConnection>,
    pub creds: Creds,
}

fn subject(container: &str, path: &str) -> String {
    format!("'{path}' in container '{container}'")
}

impl AgentFiles {
    fn fail(&self, path: &str, errno: i32, message: &str) -> Error {
        errno_error(errno, &subject(&self.connection.container, path), message)
    }

    fn odd(&self, path: &str, message: &Message) -> Error {
        unexpected(&subject(&self.connection.container, path), message)
    }

    /// `None` for a missing path (or one under a non-directory).
    pub async fn stat(&self, path: &str, follow: bool) -> Result<Option<Stat>> {
        let message = Message::StatPath {
            path: path.to_string(),
            follow,
            creds: self.creds.clone(),
        };
        let mut request = self.connection.request(&message).await?;
        match request.recv().await? {
            Message::Stat(stat) if stat.kind == FileKind::Missing => Ok(None),
            Message::Stat(stat) => Ok(Some(stat)),
            Message::Failed { errno, message } => Err(self.fail(path, errno, &message)),
            other => Err(self.odd(path, &other)),
        }
    }

    /// The whole file, which had `size` bytes at a stat just before (it may grow a little).
    pub async fn read(&self, path: &str, size: u64) -> Result<AgentReply<Vec<u8>>> {
        self.read_bounded(path, size, size.saturating_add(READ_GROWTH))
            .await
    }

    /// The whole file, `EFBIG` past `limit` bytes; `size_hint` sizes the buffer.
    pub async fn read_bounded(
        &self,
        path: &str,
        size_hint: u64,
        limit: u64,
    ) -> Result<AgentReply<Vec<u8>>> {
        let message = Message::Read {
            path: path.to_string(),
            creds: self.creds.clone(),
        };
        let mut request = self.connection.request(&message).await?;
        let mut data = Vec::with_capacity(size_hint.min(limit) as usize);
        loop {
            match request.recv().await? {
                Message::Data(chunk) => {
                    if (data.len() + chunk.len()) as u64 > limit {
                        return Err(Error::new(
                            ErrorCode::Efbig,
                            format!(
                                "{}: larger than {limit} bytes",
                                subject(&self.connection.container, path)
                            ),
                        ));
                    }
                    data.extend_from_slice(&chunk);
                }
                Message::End => return Ok(AgentReply::Done(data)),
                Message::Failed { errno, .. } if errno == libc::EINVAL => {
                    return Ok(AgentReply::NotRegular)
                }
                Message::Failed { errno, message } => return Err(self.fail(path, errno, &message)),
                other => return Err(self.odd(path, &other)),
            }
        }
    }

    /// Writes `content` to a temporary file beside `path`, then renames it over `path`:
    /// readers, and an interruption, see the old content or the new, never a mix.
    pub async fn write(&self, path: &str, content: &[u8]) -> Result<()> {
        let message = Message::Write {
            path: path.to_string(),
            creds: self.creds.clone(),
        };
        let mut request = self.connection.request(&message).await?;
        for piece in content.chunks(CHUNK) {
            // The agent may have refused already (no such directory...): stop sending.
            if let Some(reply) = request.try_recv() {
                return self.write_reply(path, reply);
            }
            request.send_data(piece).await?;
        }
        request.send(&Message::End).await?;
        let reply = request.recv().await?;
        self.write_reply(path, reply)
    }

    fn write_reply(&self, path: &str, reply: Message) -> Result<()> {
        match reply {
            Message::Done => Ok(()),
            Message::Failed { errno, message } => Err(self.fail(path, errno, &message)),
            other => Err(self.odd(path, &other)),
        }
    }

    /// `mkdir -p`.
    pub async fn make_dirs(&self, path: &str) -> Result<()> {
        let message = Message::Mkdir {
            path: path.to_string(),
            creds: self.creds.clone(),
        };
        let mut request = self.connection.request(&message).await?;
        match request.recv().await? {
            Message::Done => Ok(()),
            Message::Failed { errno, message } => Err(self.fail(path, errno, &message)),
            other => Err(self.odd(path, &other)),
        }
    }

    /// The directory's entry names (unsorted), from `Names` frames up to `End`.
    pub async fn read_dir(&self, path: &str) -> Result<Vec<String>> {
        let message = Message::ReadDir {
            path: path.to_string(),
            creds: self.creds.clone(),
        };
        let mut request = self.connection.request(&message).await?;
        let mut names = Vec::new();
        loop {
            match request.recv().await? {
                Message::Names(more) => {
                    if names.len() + more.len() > MAX_NAMES {
                        return Err(Error::new(
                            ErrorCode::Efbig,
                            format!(
                                "{}: more than {MAX_NAMES} entries",
                                subject(&self.connection.container, path)
                            ),
                        ));
                    }
                    names.extend(more);
                }
                Message::End => return Ok(names),
                Message::Failed { errno, message } => return Err(self.fail(path, errno, &message)),
                other => return Err(self.odd(path, &other)),
            }
        }
    }
}
