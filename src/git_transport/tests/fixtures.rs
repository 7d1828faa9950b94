//! Real servers and repositories for the transport tests: the fixture scripts under
//! `__test__/fixtures/`, bare repositories made with the git CLI, a self-signed certificate
//! made with the openssl CLI, and libgit2 push/fetch through `with_transfer`.

use crate::error::Result;
use crate::git_transport::{with_transfer, RemoteUrl, Transfer};
pub use crate::scratch_dir::Scratch;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("__test__/fixtures")
        .join(name)
}

/// Runs a command; its trimmed stdout, or a panic with its stderr.
pub fn run(command: &mut Command) -> String {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?}: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    run(Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args))
}

/// `git --git-dir DIR rev-parse REF`, or None when the ref does not resolve.
pub fn rev_parse(git_dir: &Path, reference: &str) -> Option<String> {
    let output = Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .args(["rev-parse", "--verify", "--quiet", reference])
        .output()
        .unwrap();
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}

pub fn bare_repository(path: &Path) {
    run(Command::new("git")
        .args(["init", "-q", "--bare", "-b", "main"])
        .arg(path));
}

/// A work repository with `commits` commits on `main`; the last commit's id.
pub fn work_repository(path: &Path, commits: usize) -> String {
    run(Command::new("git")
        .args(["init", "-q", "-b", "main"])
        .arg(path));
    for i in 0..commits {
        std::fs::write(path.join("file.txt"), format!("commit {i}\n")).unwrap();
        git(path, &["add", "file.txt"]);
        git(path, &["commit", "-q", "-m", &format!("commit {i}")]);
    }
    git(path, &["rev-parse", "HEAD"])
}

pub fn transfer(url: &str) -> Transfer {
    Transfer {
        url: RemoteUrl::parse(url).unwrap(),
        credentials: None,
        ca_certificate: None,
        timeout: Duration::from_secs(30),
        max_received_bytes: 64 << 20,
    }
}

/// libgit2 pushes `refspec` of the repository at `work` to the transfer's remote.
pub fn push(work: &Path, transfer: &Transfer, refspec: &str) -> Result<()> {
    with_transfer(transfer, |url| {
        let repo = git2::Repository::open(work)?;
        let mut remote = repo.remote_anonymous(url)?;
        remote.push(&[refspec], None)
    })
}

/// libgit2 fetches `refspec` from the transfer's remote into the repository at `into`.
pub fn fetch(into: &Path, transfer: &Transfer, refspec: &str) -> Result<()> {
    with_transfer(transfer, |url| {
        let repo = git2::Repository::open(into)?;
        let mut remote = repo.remote_anonymous(url)?;
        remote.fetch(&[refspec], None, None)
    })
}

/// A self-signed certificate for 127.0.0.1 (subjectAltName IP:127.0.0.1): (cert, key).
pub fn self_signed_certificate(dir: &Path) -> (PathBuf, PathBuf) {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    run(Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
        ])
        .args(["-nodes", "-days", "2", "-subj", "/CN=127.0.0.1"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1"])
        .args(["-addext", "basicConstraints=critical,CA:FALSE"])
        .args(["-addext", "extendedKeyUsage=serverAuth"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stderr(Stdio::null()));
    (cert, key)
}

/// `git-http-server.mjs`, stopped when dropped.
pub struct HttpServer {
    child: Child,
    pub port: u16,
}

impl HttpServer {
    pub fn start(args: &[&str]) -> HttpServer {
        let mut child = Command::new("node")
            .arg(fixture("git-http-server.mjs"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("node");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("{\"port\":")
            .and_then(|rest| rest.strip_suffix('}'))
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("git-http-server.mjs printed {line:?}"));
        HttpServer { child, port }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `git-sshd.sh` in a directory of its own, stopped when dropped (drop it before the
/// directory is removed).
pub struct SshServer {
    pub dir: PathBuf,
    pub port: u16,
    pid: i32,
}

impl SshServer {
    /// Fails, saying what to install, when there is no sshd here: a test that cannot run
    /// says so, never passes without testing.
    pub fn start(dir: &Path) -> SshServer {
        assert!(
            Path::new("/usr/sbin/sshd").exists(),
            "/usr/sbin/sshd is absent: run scripts/provision.sh (it installs openssh-server)"
        );
        std::fs::create_dir_all(dir).unwrap();
        let port = run(Command::new("bash")
            .arg(fixture("git-sshd.sh"))
            .arg("start")
            .arg(dir));
        let pid = std::fs::read_to_string(dir.join("sshd.pid")).unwrap();
        SshServer {
            dir: dir.to_path_buf(),
            port: port.parse().unwrap(),
            pid: pid.trim().parse().unwrap(),
        }
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

impl Drop for SshServer {
    fn drop(&mut self) {
        let stopped = Command::new("bash")
            .arg(fixture("git-sshd.sh"))
            .arg("stop")
            .arg(&self.dir)
            .status();
        if !stopped.is_ok_and(|status| status.success()) {
            // SAFETY: kill(2) on the pid of the sshd this fixture started.
            unsafe { libc::kill(self.pid, libc::SIGTERM) };
        }
    }
}

/// Live processes that are children of this one, with `marker` in their command line.
pub fn child_processes_with(marker: &str) -> Vec<String> {
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        if fields.get(1) != Some(&me.as_str()) {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(marker) {
            found.push(format!("{} {}", fields[0], cmdline));
        }
    }
    found
}
