//! The direct line to a container's agent, from the host's side. The host listens on a unix
//! socket of its own (`host-<pid>.sock`) in the container's line folder, which this library
//! made and mounted read-only (`crate::runtime`'s `line_folder`); the agent, told over the
//! exec stream where and with which token (`Line`), connects to it. Before a byte of the
//! connection is trusted, the kernel says who connected (`line_peer`: the container's
//! agent, by cgroup, pid namespace and pid) and the first frame must carry this start's
//! token; then the host answers `Done` on the line, the agent confirms over the exec
//! stream, and frames travel over the socket with no engine between.
//!
//! The egress relay (`agent relay`, the same binary in its own exec) is offered the line the
//! same way (`offer_line`): the offer goes out over its exec and its answer comes back from
//! its channel's reader, so the negotiation takes the answer as a future.
//!
//! The socket itself is `line_listener`'s. The host never connects to anything the container can name: a swapped entry can only
//! lead the agent astray, which the agent reports (or its silence times out), and the exec
//! stream stays in use. The first connection decides: one that is not the agent's is
//! refused and the session keeps the exec stream, with the reason kept for
//! `containerAccess`.

use std::future::Future;
use std::time::Duration;

use container_isolation_agent::protocol::{encode, FrameBuffer, Message, ProtocolError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::OwnedReadHalf;
use tokio::net::UnixStream;
use tokio::sync::mpsc;

use super::agent_routes::RouteEnd;
use super::line_listener::LineListener;
use super::line_peer::{check_peer, ExpectedPeer};

/// How long the first connection may take to present its token.
const TOKEN_WAIT: Duration = Duration::from_secs(2);
/// How long the agent may take to answer `Line` (it gives up on a silent listener sooner).
const LINE_WAIT: Duration = Duration::from_secs(8);
/// What one read of the line takes at most.
const READ_SIZE: usize = 1 << 18;

/// Which way a connection's requests travel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// Over the direct line.
    Direct,
    /// Over the exec stream, and why not the direct line.
    Exec(String),
}

/// What the host offers one start of the agent.
pub struct LineOffer<'a> {
    pub listener: &'a LineListener,
    pub init_pid: u32,
    pub engine_id: String,
}

/// How the offer ended.
pub enum Negotiated {
    Direct(UnixStream),
    /// The exec stream goes on, and why.
    Exec(String),
    /// The agent took a line that is not this host's: its exec stream is useless now.
    Broken(String),
}

/// What the negotiation needs of a process being started: the id of its `Line` request,
/// where its frames go, its answer to `Line` (`None` if it went away), and its pid in the
/// container (its `Welcome`'s).
pub struct LineRequest<'a, A> {
    pub id: u32,
    pub answer: A,
    pub outgoing: &'a mpsc::Sender<Vec<u8>>,
    pub agent_pid: u32,
}

/// The answer to `Line` from an agent connection's request queue.
pub fn route_answer(route: &mut RouteEnd) -> impl Future<Output = Option<Message>> + '_ {
    route.replies.recv()
}

/// Offers the line to a just-started agent (or relay) and settles it one way or the other,
/// once no other offer is under way on the listener.
pub async fn negotiate<A: Future<Output = Option<Message>>>(
    offer: &LineOffer<'_>,
    request: LineRequest<'_, A>,
) -> Negotiated {
    let _turn = offer.listener.turn.lock().await;
    let answer = request.answer;
    tokio::pin!(answer);
    let token = random_token();
    let line = Message::Line {
        path: offer.listener.container_path(),
        token: token.clone(),
    };
    if request
        .outgoing
        .send(encode(request.id, &line))
        .await
        .is_err()
    {
        return Negotiated::Broken("the agent went away before the line was offered".into());
    }
    let expected = ExpectedPeer {
        init_pid: offer.init_pid,
        agent_pid: request.agent_pid,
        engine_id: &offer.engine_id,
    };
    let deadline = tokio::time::sleep(LINE_WAIT);
    tokio::pin!(deadline);
    // The first connection's fate: `Ok` once accepted, `Err` with why it was refused.
    let mut decided: Option<Result<UnixStream, String>> = None;
    loop {
        tokio::select! {
            reply = &mut answer => {
                return settle(decided, reply);
            }
            accepted = offer.listener.listener.accept() => match accepted {
                Ok((stream, _)) if decided.is_none() => {
                    decided = Some(admit(stream, &expected, request.id, &token).await);
                }
                // After the first: closed at once, so that an agent waiting on it hears.
                Ok(_) => {}
                Err(e) => {
                    decided.get_or_insert_with(|| Err(format!("the line's socket failed: {e}")));
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            },
            _ = &mut deadline => {
                return Negotiated::Broken(format!(
                    "the agent did not answer the line's offer within {} s",
                    LINE_WAIT.as_secs()
                ));
            }
        }
    }
}

/// The end of the negotiation, given the agent's answer to `Line`.
fn settle(decided: Option<Result<UnixStream, String>>, reply: Option<Message>) -> Negotiated {
    match (decided, reply) {
        (Some(Ok(stream)), Some(Message::Done)) => {
            widen(&stream);
            Negotiated::Direct(stream)
        }
        (Some(Err(why)), Some(Message::Failed { .. })) => Negotiated::Exec(why),
        (None, Some(Message::Failed { message, .. })) => {
            Negotiated::Exec(format!("the agent could not take the line: {message}"))
        }
        (Some(Ok(_)), Some(Message::Failed { message, .. })) => {
            Negotiated::Exec(format!("the agent gave up the line: {message}"))
        }
        (_, Some(Message::Done)) => Negotiated::Broken(
            "the agent was answered on the line by something other than this host (the entry in the container leads to a listener of its own)".into(),
        ),
        (_, Some(other)) => Negotiated::Broken(format!("the agent answered the line's offer with {other:?}")),
        (_, None) => Negotiated::Broken("the agent went away while the line was offered".into()),
    }
}

/// The send buffer asked for on a direct line, the agent's or the relay's (the kernel
/// doubles it, and caps it at its `wmem_max`): a few frames in flight, where the default
/// holds less than one.
const LINE_BUFFER: libc::c_int = 1 << 20;

/// Widens the line's send buffer, so that a write's data streams without waiting on every
/// frame. A refusal leaves the default, which works, only slower.
fn widen(stream: &tokio::net::UnixStream) {
    use std::os::fd::AsRawFd;
    // SAFETY: sets an integer option on our own socket.
    unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            (&LINE_BUFFER as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// Checks the first connection: the container's agent, presenting `token` under `id`;
/// then accepts it with `Done`.
async fn admit(
    mut stream: UnixStream,
    expected: &ExpectedPeer<'_>,
    id: u32,
    token: &[u8],
) -> Result<UnixStream, String> {
    let refused = |why: String| format!("a connection to the line was refused: {why}");
    check_peer(&stream, expected).map_err(refused)?;
    let first = tokio::time::timeout(TOKEN_WAIT, first_frame(&mut stream))
        .await
        .map_err(|_| refused(format!("no token within {} s", TOKEN_WAIT.as_secs())))?
        .map_err(refused)?;
    match first {
        (got, Message::Join { token: given }) if got == id && same_secret(&given, token) => {}
        (_, Message::Join { .. }) => return Err(refused("it presented another token".into())),
        (_, other) => return Err(refused(format!("it began with {other:?}, not the token"))),
    }
    // The peer was checked at connect; it must still be the agent now it sent the token.
    check_peer(&stream, expected).map_err(refused)?;
    stream
        .write_all(&encode(id, &Message::Done))
        .await
        .map_err(|e| refused(format!("it could not be answered: {e}")))?;
    Ok(stream)
}

/// The one frame a joining agent sends before the host's answer.
async fn first_frame(stream: &mut UnixStream) -> Result<(u32, Message), String> {
    let mut frames = FrameBuffer::default();
    let mut buf = [0u8; 512];
    loop {
        if let Some(frame) = frames.next_frame() {
            return frame.map_err(|e| e.to_string());
        }
        match stream.read(&mut buf).await {
            Ok(0) => return Err("it closed without a token".into()),
            Ok(n) => frames.push(&buf[..n]),
            Err(e) => return Err(format!("it could not be read: {e}")),
        }
    }
}

fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn random_token() -> Vec<u8> {
    let mut token = uuid::Uuid::new_v4().as_bytes().to_vec();
    token.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
    token
}

/// Frames read from the line.
pub struct LineFrames {
    read: OwnedReadHalf,
    frames: FrameBuffer,
    buf: Vec<u8>,
}

impl LineFrames {
    pub fn new(read: OwnedReadHalf) -> LineFrames {
        LineFrames {
            read,
            frames: FrameBuffer::default(),
            buf: vec![0; READ_SIZE],
        }
    }

    /// The next frame; `None` when the line ends, an error for a malformed frame.
    pub async fn next(&mut self) -> Option<Result<(u32, Message), ProtocolError>> {
        loop {
            if let Some(frame) = self.frames.next_frame() {
                // As the exec's reader: a flood gives its worker back now and then.
                tokio::task::consume_budget().await;
                return Some(frame);
            }
            match self.read.read(&mut self.buf).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.frames.push(&self.buf[..n]),
            }
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_compared_whole() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abc", b"abd"));
        assert!(!same_secret(b"abc", b"ab"));
        assert_ne!(random_token(), random_token());
        assert_eq!(random_token().len(), 32);
    }

    fn outcome(decided: Option<Result<(), &str>>, reply: Option<Message>) -> String {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let decided = decided.map(|d| {
                d.map(|_| UnixStream::pair().unwrap().0)
                    .map_err(str::to_string)
            });
            match settle(decided, reply) {
                Negotiated::Direct(_) => "direct".to_string(),
                Negotiated::Exec(why) => format!("exec: {why}"),
                Negotiated::Broken(why) => format!("broken: {why}"),
            }
        })
    }

    #[test]
    fn the_line_is_direct_only_when_accepted_here_and_confirmed_by_the_agent() {
        let failed = || {
            Some(Message::Failed {
                errno: 110,
                message: "it timed out".into(),
            })
        };
        assert_eq!(outcome(Some(Ok(())), Some(Message::Done)), "direct");
        assert_eq!(
            outcome(Some(Err("not the agent")), failed()),
            "exec: not the agent"
        );
        assert!(outcome(None, failed())
            .starts_with("exec: the agent could not take the line: it timed out"));
        assert!(outcome(Some(Ok(())), failed()).starts_with("exec: the agent gave up"));
        // Confirmed without having been accepted here: it joined someone else's listener.
        assert!(outcome(None, Some(Message::Done)).contains("something other than this host"));
        assert!(outcome(Some(Err("refused")), Some(Message::Done)).starts_with("broken"));
        assert!(outcome(None, None).starts_with("broken"));
    }
}
