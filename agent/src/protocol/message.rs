//! What host and agent say to each other: the `Message` kinds and the structures they carry.

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
    /// Answered by `Spawned` (or `Failed` when no reaper could be started), `Output`s and
    /// `Exited`. A program that cannot be run still gets `Spawned` (pid 0), its reason on
    /// stderr and `Exited` with code 126.
    Spawn(Spawn),
    Stdin(Vec<u8>),
    StdinEnd,
    /// Signals every process of the command (its reaper's whole subtree), once it has
    /// started; answered by `Signalled`, after `Spawned`.
    Signal {
        signo: i32,
    },
    /// Stops and kills every process of the command until none is left (also what it left
    /// running after it exited); answered by `Signalled`, after `Spawned`.
    Kill,
    /// Answered by `Stat` (kind `Missing` for nothing there) or `Failed`.
    StatPath {
        path: String,
        follow: bool,
        creds: Creds,
    },
    /// Answered by `Data` frames and `End`, or `Failed` (`EINVAL` for what is not a
    /// regular file: a fifo or a device is never opened).
    Read {
        path: String,
        creds: Creds,
    },
    /// Followed by `Data` frames and `End`; the file appears whole or not at all.
    /// Answered by `Done` or `Failed` (`ECANCELED` after `Abort`).
    Write {
        path: String,
        creds: Creds,
    },
    /// Abandons a `Write` (nothing of it remains).
    Abort,
    /// `mkdir -p`; answered by `Done` or `Failed`.
    Mkdir {
        path: String,
        creds: Creds,
    },
    /// Answered by one or more `Names` frames (a listing too long for one frame comes in
    /// several) and `End`, or by `Failed`.
    ReadDir {
        path: String,
        creds: Creds,
    },
    /// Relay: opens a connection to `port` on the container's loopback for a forwarded
    /// port; answered by `Done` (then `Data`, `Credit`, `End`, `Abort` either way) or `Failed`.
    Dial {
        port: u16,
    },
    /// Answered at once by `Pong` under the same id: the host's way of telling a silent
    /// agent (a long command, a slow disk) from one that no longer answers at all.
    Ping,
    /// The direct line (protocol 3): connect to the host's unix socket at `path` (a
    /// container path, never followed if it is a symlink), present `Join` with `token` and
    /// wait for the host's `Done` on that socket; then answer `Done` here and carry on over
    /// the socket. Answered by `Failed` when any step fails (the exec's pipes stay in use).
    Line {
        path: String,
        token: Vec<u8>,
    },
    /// A command on a pseudo-terminal of `cols` × `rows` (protocol 4): its own session with
    /// the terminal as its controlling terminal and stdin, stdout and stderr. Answered as
    /// `Spawn` is (its output as stdout `Output`); `Stdin` is written to the terminal, and
    /// each piece written is acknowledged by a `Credit` under the id `acks` (a route the
    /// host opened for them), so the host bounds what it has in flight. When the command
    /// exits, what it left running is killed.
    Terminal {
        spawn: Spawn,
        cols: u16,
        rows: u16,
        acks: u32,
    },
    /// A terminal's new size (the program sees `SIGWINCH`); no answer.
    Resize {
        cols: u16,
        rows: u16,
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
    Pong,
    /// The first frame on the direct line: the token the host gave with `Line`, under the
    /// `Line` request's id.
    Join {
        token: Vec<u8>,
    },
    /// Relay: a connection accepted on the proxy listener of that index; the frame's id is
    /// the agent's (high bit set) and names the stream from then on.
    Accepted {
        listener: u8,
    },
    // Either way.
    Data(Vec<u8>),
    End,
    /// The receiver has passed on `bytes` more of a stream's data; the sender may send that
    /// much more. On the relay each side starts with `RELAY_WINDOW`; on the command channel
    /// the agent starts each request's replies with `REPLY_WINDOW` (see `reply_cost`).
    Credit {
        bytes: u32,
    },
}
