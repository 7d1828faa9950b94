//! What the archive `HEAD` endpoint says about a path (`X-Docker-Container-Path-Stat`), with
//! the mode decoded from Go's `os.FileMode`.

use bollard::container::PathStatResponse;
use chrono::DateTime;

const MODE_DIR: u32 = 1 << 31;
const MODE_SYMLINK: u32 = 1 << 27;
const MODE_SETUID: u32 = 1 << 23;
const MODE_SETGID: u32 = 1 << 22;
const MODE_STICKY: u32 = 1 << 20;
/// Named pipe, socket, device, char device, irregular.
const MODE_SPECIAL: u32 = (1 << 25) | (1 << 24) | (1 << 26) | (1 << 21) | (1 << 19);

#[derive(Debug, Clone, PartialEq)]
pub struct PathStat {
    pub size: u64,
    /// Go `os.FileMode` bits.
    pub go_mode: u32,
    pub mtime_ms: f64,
    /// For a symlink: the container path it resolves to.
    pub link_target: String,
}

impl PathStat {
    pub fn is_dir(&self) -> bool {
        self.go_mode & MODE_DIR != 0
    }

    pub fn is_symlink(&self) -> bool {
        self.go_mode & MODE_SYMLINK != 0
    }

    pub fn is_regular(&self) -> bool {
        self.go_mode & (MODE_DIR | MODE_SYMLINK | MODE_SPECIAL) == 0
    }

    /// Unix permission bits, with setuid/setgid/sticky.
    pub fn unix_mode(&self) -> u32 {
        let mut mode = self.go_mode & 0o777;
        if self.go_mode & MODE_SETUID != 0 {
            mode |= 0o4000;
        }
        if self.go_mode & MODE_SETGID != 0 {
            mode |= 0o2000;
        }
        if self.go_mode & MODE_STICKY != 0 {
            mode |= 0o1000;
        }
        mode
    }

    pub fn from_engine(stat: &PathStatResponse) -> PathStat {
        PathStat {
            size: u64::try_from(stat.size).unwrap_or(0),
            go_mode: stat.file_mode,
            mtime_ms: stat
                .modification_time
                .as_deref()
                .map(parse_mtime_ms)
                .unwrap_or(0.0),
            link_target: stat.link_target.clone(),
        }
    }
}

/// RFC 3339 with up to nanoseconds → milliseconds, keeping the fraction.
pub fn parse_mtime_ms(text: &str) -> f64 {
    match DateTime::parse_from_rfc3339(text) {
        Ok(t) => t.timestamp() as f64 * 1000.0 + f64::from(t.timestamp_subsec_nanos()) / 1e6,
        Err(_) => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(mode: u32) -> PathStat {
        PathStat {
            size: 0,
            go_mode: mode,
            mtime_ms: 0.0,
            link_target: String::new(),
        }
    }

    #[test]
    fn decodes_go_file_modes() {
        assert!(stat(2147484141).is_dir());
        assert_eq!(stat(2147484141).unix_mode(), 0o755);
        assert!(stat(134218239).is_symlink());
        assert!(stat(420).is_regular());
        assert_eq!(stat(420).unix_mode(), 0o644);
        assert_eq!(stat(MODE_DIR | MODE_STICKY | 0o777).unix_mode(), 0o1777);
    }

    #[test]
    fn mtimes_keep_sub_millisecond_precision() {
        let ms = parse_mtime_ms("2026-11-22T18:10:46.111720287Z");
        assert!((ms - 1_795_371_046_111.720_2).abs() < 0.001, "{ms}");
    }
}
