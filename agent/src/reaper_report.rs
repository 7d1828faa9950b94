//! What a reaper tells `serve` on their private socket: fixed-size records that the reaper
//! can write from a forked child without allocating, and that `serve` turns into protocol
//! messages (the failure's text included) itself.

/// A record's size: kind, then two `i32` fields, little-endian.
pub const SIZE: usize = 12;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// The command was exec'd.
    Spawned { pid: i32 },
    /// The command could not be started (`errno` of the preparation or of `execve`).
    Failed { errno: i32 },
    /// The command ended, with its `waitpid` status.
    Exited { status: i32 },
}

impl Report {
    pub fn to_bytes(self) -> [u8; SIZE] {
        let (kind, value) = match self {
            Report::Spawned { pid } => (1i32, pid),
            Report::Failed { errno } => (2, errno),
            Report::Exited { status } => (3, status),
        };
        let mut bytes = [0u8; SIZE];
        bytes[..4].copy_from_slice(&kind.to_le_bytes());
        bytes[4..8].copy_from_slice(&value.to_le_bytes());
        bytes
    }

    pub fn parse(bytes: &[u8; SIZE]) -> Option<Report> {
        let field = |at: usize| i32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let value = field(4);
        Some(match field(0) {
            1 => Report::Spawned { pid: value },
            2 => Report::Failed { errno: value },
            3 => Report::Exited { status: value },
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        for report in [
            Report::Spawned { pid: 42 },
            Report::Failed {
                errno: libc::ENOENT,
            },
            Report::Exited { status: 9 },
        ] {
            assert_eq!(Report::parse(&report.to_bytes()), Some(report));
        }
        assert_eq!(Report::parse(&[9; SIZE]), None);
    }
}
