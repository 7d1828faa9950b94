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
