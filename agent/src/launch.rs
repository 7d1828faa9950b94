//! A command made ready to start, for the reaper that `reaper::fork_reaper` forks.
//! Everything the reaper and the command need after the fork — argv, environment, the
//! paths `execve` tries in `PATH` order, directory, user — is built here first: a child
//! forked from this multi-threaded process may only make system calls (no allocation, no
//! locks) until it execs.
//!
//! The reaper is forked, not exec'd: a fresh image of this binary per command cost about
//! 0.5 ms of every command's start. It holds a copy-on-write image of `serve` (a few MiB at
//! most: `serve` streams, it never buffers a whole file) for as long as the command runs.

use std::collections::BTreeMap;
use std::ffi::{CString, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::sync::OnceLock;

use container_isolation_agent::protocol::Spawn;


/// Where `execve` looks when neither the command's environment nor ours has `PATH`
/// (glibc's default for `execvp`).
const DEFAULT_PATH: &[u8] = b"/bin:/usr/bin";

/// A command's argv, environment and credentials as system calls take them.
pub struct Launch {
    pub program: String,
    argv: Vec<CString>,
    env: Vec<CString>,
    /// The paths tried by `execve`, in order (one when the program names a path).
    candidates: Vec<CString>,
    cwd: Option<CString>,
    pub uid: libc::uid_t,
    pub gid: libc::gid_t,
    pub groups: Vec<libc::gid_t>,
    /// The command's stdin is a pseudo-terminal, to become its controlling terminal in a
    /// session of its own.
    pub terminal: bool,
}

/// Null-terminated pointer arrays over a `Launch`'s strings, made before the fork.
pub struct Pointers {
    pub argv: Vec<*const libc::c_char>,
    pub env: Vec<*const libc::c_char>,
    pub candidates: Vec<*const libc::c_char>,
    pub cwd: *const libc::c_char,
}

/// The descriptors the reaper keeps, by their number in `serve`.
pub struct ReaperFds {
    pub channel: i32,
    pub stdin: i32,
    pub stdout: i32,
    pub stderr: i32,
    pub null: i32,
}

fn invalid() -> std::io::Error {
    std::io::Error::from_raw_os_error(libc::EINVAL)
}

fn c_string(bytes: impl Into<Vec<u8>>) -> std::io::Result<CString> {
    CString::new(bytes).map_err(|_| invalid())
}

impl Launch {
    pub fn new(spawn: &Spawn) -> std::io::Result<Launch> {
        let program = spawn
            .argv
            .first()
            .filter(|p| !p.is_empty())
            .ok_or_else(invalid)?;
        let argv = spawn
            .argv
            .iter()
            .map(|a| c_string(a.as_bytes()))
            .collect::<std::io::Result<Vec<_>>>()?;
        let mut env: BTreeMap<OsString, OsString> = BTreeMap::new();
        if !spawn.replace_env {
            env.extend(inherited().iter().cloned());
            if let Some(home) = &spawn.home {
                env.insert("HOME".into(), home.into());
            }
        }
        env.extend(spawn.env.iter().map(|(k, v)| (k.into(), v.into())));
        let path = env.get(std::ffi::OsStr::new("PATH")).cloned();
        let env = env
            .into_iter()
            .map(|(k, v)| {
                let mut entry = k.into_vec();
                entry.push(b'=');
                entry.extend(v.into_vec());
                c_string(entry)
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        Ok(Launch {
            program: program.clone(),
            argv,
            env,
            candidates: candidates(program, path.as_ref().map(|p| p.as_bytes()))?,
            cwd: spawn
                .cwd
                .as_deref()
                .map(|c| c_string(c.as_bytes()))
                .transpose()?,
            uid: spawn.creds.uid,
            gid: spawn.creds.gid,
            groups: spawn.creds.groups.clone(),
            terminal: false,
        })
    }

    pub fn pointers(&self) -> Pointers {
        let terminated = |strings: &[CString]| {
            let mut pointers: Vec<_> = strings.iter().map(|s| s.as_ptr()).collect();
            pointers.push(std::ptr::null());
            pointers
        };
        Pointers {
            argv: terminated(&self.argv),
            env: terminated(&self.env),
            candidates: terminated(&self.candidates),
            cwd: self.cwd.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
        }
    }
}

/// The agent's own environment, which every command not asking for a clean one starts
/// from: read once (`serve` never changes it).
fn inherited() -> &'static [(OsString, OsString)] {
    static INHERITED: OnceLock<Vec<(OsString, OsString)>> = OnceLock::new();
    INHERITED.get_or_init(|| std::env::vars_os().collect())
}

/// The paths to try for `program`: itself when it holds a `/`, else each `PATH` entry
/// joined with it (an empty entry is the working directory, as for `execvp`).
fn candidates(program: &str, path: Option<&[u8]>) -> std::io::Result<Vec<CString>> {
    if program.contains('/') {
        return Ok(vec![c_string(program.as_bytes())?]);
    }
    path.unwrap_or(DEFAULT_PATH)
        .split(|b| *b == b':')
        .map(|dir| {
            let dir = if dir.is_empty() { &b"."[..] } else { dir };
            let mut full = dir.to_vec();
            if !full.ends_with(b"/") {
                full.push(b'/');
            }
            full.extend_from_slice(program.as_bytes());
            c_string(full)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(c: &[CString]) -> Vec<&str> {
        c.iter().map(|s| s.to_str().unwrap()).collect()
    }

    #[test]
    fn a_program_without_a_slash_is_looked_up_in_path_order() {
        let found = candidates("ls", Some(b"/usr/local/bin:/bin/::/x/")).unwrap();
        assert_eq!(
            strings(&found),
            ["/usr/local/bin/ls", "/bin/ls", "./ls", "/x/ls"]
        );
        assert_eq!(
            strings(&candidates("ls", None).unwrap()),
            ["/bin/ls", "/usr/bin/ls"]
        );
        assert_eq!(
            strings(&candidates("./run.sh", Some(b"/bin")).unwrap()),
            ["./run.sh"]
        );
    }

    #[test]
    fn the_environment_is_inherited_or_replaced_and_home_is_set() {
        let mut spawn = Spawn {
            argv: vec!["env".into()],
            cwd: None,
            replace_env: true,
            env: vec![("ONLY".into(), "1".into())],
            creds: Default::default(),
            home: Some("/home/u".into()),
            stdin: false,
        };
        assert_eq!(strings(&Launch::new(&spawn).unwrap().env), ["ONLY=1"]);
        spawn.replace_env = false;
        let inherited = Launch::new(&spawn).unwrap();
        assert!(strings(&inherited.env).contains(&"HOME=/home/u"));
        assert!(strings(&inherited.env).contains(&"ONLY=1"));
    }

    #[test]
    fn an_empty_argv_or_a_nul_byte_is_invalid() {
        let mut spawn = Spawn {
            argv: vec![],
            cwd: None,
            replace_env: true,
            env: vec![],
            creds: Default::default(),
            home: None,
            stdin: false,
        };
        assert!(Launch::new(&spawn).is_err());
        spawn.argv = vec!["a\0b".into()];
        assert!(Launch::new(&spawn).is_err());
    }
}
