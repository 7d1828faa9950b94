//! What every in-container test needs: the static agent binary, a labelled container that
//! is removed when the test ends, and `docker exec` for looking inside it.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use container_isolation_agent::protocol::{Creds, Spawn};

pub use super::client::{Agent, Failure};

pub const DEBIAN: &str = "container-isolation-test:debian";
pub const BUSYBOX: &str = "container-isolation-test:busybox";
pub const NOSHELL: &str = "container-isolation-test:noshell";
/// Every container these tests start carries it (`docker rm -f $(docker ps -aq --filter
/// label=org.container-isolation.test=agent)` removes any a killed run left behind).
pub const LABEL: &str = "org.container-isolation.test=agent";
/// What keeps a debian or busybox container running: long enough for any test, and short
/// enough that a container a killed test run could not remove goes away by itself (`--rm`).
pub const KEEP_ALIVE: &[&str] = &["sleep", "1800"];
const BUILD: &str = "RUSTFLAGS=\"-C target-feature=+crt-static\" cargo build --release \
    -p container-isolation-agent --target x86_64-unknown-linux-gnu --target-dir target/agent";

pub fn root() -> Creds {
    Creds::default()
}

pub fn user() -> Creds {
    Creds {
        uid: 1000,
        gid: 1000,
        groups: vec![1000],
    }
}

/// The static agent: `CONTAINER_ISOLATION_AGENT_BIN`, or what `BUILD` produces (which must
/// be newer than every source of the agent, so that a stale binary is not what is tested).
fn agent_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("CONTAINER_ISOLATION_AGENT_BIN") {
        return PathBuf::from(path);
    }
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let binary = crate_dir
        .join("../target/agent/x86_64-unknown-linux-gnu/release/container-isolation-agent");
    let built = std::fs::metadata(&binary)
        .and_then(|m| m.modified())
        .unwrap_or_else(|_| panic!("no agent at {}; build it with: {BUILD}", binary.display()));
    let newest = newest_source(&crate_dir.join("src"));
    assert!(
        built >= newest,
        "{} is older than the agent's sources; rebuild it with: {BUILD}",
        binary.display()
    );
    binary.canonicalize().unwrap()
}

fn newest_source(dir: &std::path::Path) -> SystemTime {
    let mut newest = SystemTime::UNIX_EPOCH;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let meta = entry.metadata().unwrap();
        let time = if meta.is_dir() {
            newest_source(&entry.path())
        } else {
            meta.modified().unwrap()
        };
        newest = newest.max(time);
    }
    newest
}

/// Whether a dockerd answers; when none does, the tests say so and pass.
pub fn docker_available() -> bool {
    let ok = Command::new("docker")
        .args(["info", "--format", "{{.ServerVersion}}"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: no docker daemon answers `docker info`");
    }
    ok
}

/// A running container with the agent mounted at `/.container-isolation-agent`; removed
/// (`docker rm -f`) when dropped, whatever the test did.
pub struct Container {
    pub id: String,
}

impl Container {
    /// Starts `image` kept alive by `keep_alive`, with extra `docker run` options.
    pub fn start(image: &str, options: &[&str], keep_alive: &[&str]) -> Container {
        let mount = format!(
            "{}:/.container-isolation-agent:ro",
            agent_binary().display()
        );
        let output = Command::new("docker")
            .args(["run", "-d", "--rm", "--label", LABEL, "-v", &mount])
            .args(options)
            .arg(image)
            .args(keep_alive)
            .output()
            .expect("docker run");
        assert!(
            output.status.success(),
            "docker run {image}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let id = String::from_utf8(output.stdout).unwrap().trim().to_string();
        Container { id }
    }

    pub fn debian() -> Container {
        Container::start(DEBIAN, &[], KEEP_ALIVE)
    }

    pub fn busybox() -> Container {
        Container::start(BUSYBOX, &[], KEEP_ALIVE)
    }

    /// `docker exec` of `args`, which must succeed; its stdout.
    pub fn exec(&self, args: &[&str]) -> String {
        let output = Command::new("docker")
            .arg("exec")
            .arg(&self.id)
            .args(args)
            .output()
            .expect("docker exec");
        assert!(
            output.status.success(),
            "docker exec {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    pub fn sh(&self, script: &str) -> String {
        self.exec(&["sh", "-c", script])
    }

    /// The command line of every living process but pid 1 (zombies have none).
    pub fn processes(&self) -> Vec<String> {
        let script = "for p in /proc/[0-9]*; do [ \"${p#/proc/}\" = 1 ] && continue; \
                      c=$(tr '\\0' ' ' < $p/cmdline 2>/dev/null); [ -n \"$c\" ] && echo \"$c\"; done; true";
        self.sh(script)
            .lines()
            .map(str::to_string)
            .filter(|l| !l.contains("/proc/[0-9]*") && !l.starts_with("tr "))
            .collect()
    }

    /// Processes whose command line contains `needle`, once they stop changing or after
    /// `within`: what is left of a killed tree must be gone by then.
    pub fn left(&self, needle: &str, within: Duration) -> Vec<String> {
        let deadline = Instant::now() + within;
        loop {
            let found: Vec<_> = self
                .processes()
                .into_iter()
                .filter(|p| p.contains(needle))
                .collect();
            if found.is_empty() || Instant::now() > deadline {
                return found;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn agent(&self) -> Agent {
        Agent::start(&self.id)
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = Command::new("docker")
            .args(["rm", "-f", &self.id])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

pub fn spawn_of(argv: &[&str], stdin: bool) -> Spawn {
    Spawn {
        argv: argv.iter().map(|a| a.to_string()).collect(),
        stdin,
        ..Spawn::default()
    }
}

/// Bytes from a small xorshift generator (no dependency), different for each `seed`.
pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}
