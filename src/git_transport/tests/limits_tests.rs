//! The bounds of a transfer (deadline, bytes received) and the refusal of network use
//! outside one.

use super::fixtures::*;
use crate::error::ErrorCode;
use crate::git_transport::ensure_registered;
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A listener that accepts connections and never says a word, until dropped.
pub struct SilentServer {
    pub port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl SilentServer {
    pub fn start() -> SilentServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut held = Vec::new();
            while !stopping.load(Ordering::SeqCst) {
                if let Ok((connection, _)) = listener.accept() {
                    held.push(connection);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        SilentServer {
            port,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for SilentServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[test]
fn a_server_that_never_answers_is_a_timeout() {
    let silent = SilentServer::start();
    let scratch = Scratch::new("http-silent");
    let into = scratch.path("into.git");
    bare_repository(&into);
    let mut transfer = transfer(&format!("http://127.0.0.1:{}/repo.git", silent.port));
    transfer.timeout = Duration::from_secs(2);
    let started = Instant::now();
    let error = fetch(&into, &transfer, "refs/heads/*:refs/heads/*").unwrap_err();
    let elapsed = started.elapsed();
    eprintln!("silent http server: {error} after {elapsed:?}");
    assert_eq!(error.code, ErrorCode::Timeout, "{error}");
    assert!(elapsed < Duration::from_secs(4), "{elapsed:?}");
}

/// A pseudo-random (incompressible) file of `len` bytes.
pub fn random_file(path: &std::path::Path, len: usize) {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let bytes: Vec<u8> = (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    std::fs::write(path, bytes).unwrap();
}

/// A pushed pack streams out as a chunked body (no whole pack in memory, no length known
/// up front); a fetch of it past `max_received_bytes` is LIMIT_EXCEEDED.
#[test]
fn a_pack_streams_out_and_a_fetch_past_max_received_bytes_is_limit_exceeded() {
    let scratch = Scratch::new("http-limit");
    let server_repo = scratch.path("srv/repo.git");
    bare_repository(&server_repo);
    let work = scratch.path("work");
    work_repository(&work, 1);
    random_file(&work.join("big.bin"), 2 << 20);
    git(&work, &["add", "big.bin"]);
    git(&work, &["commit", "-q", "-m", "big"]);
    let (root, log) = (scratch.path("srv"), scratch.path("requests.log"));
    let server = HttpServer::start(&[
        "--root",
        root.to_str().unwrap(),
        "--requests-log",
        log.to_str().unwrap(),
    ]);
    let url = format!("http://127.0.0.1:{}/repo.git", server.port);
    push(&work, &transfer(&url), "refs/heads/main:refs/heads/main").unwrap();
    let post = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .find(|line| line["method"] == "POST")
        .unwrap();
    assert_eq!(post["headers"]["transfer-encoding"], "chunked", "{post}");
    assert!(post["headers"].get("content-length").is_none(), "{post}");

    let small = scratch.path("small.git");
    bare_repository(&small);
    let mut bounded = transfer(&url);
    bounded.max_received_bytes = 512 << 10;
    let error = fetch(&small, &bounded, "refs/heads/main:refs/heads/main").unwrap_err();
    eprintln!("fetch of a 2 MiB blob with a 512 KiB bound: {error}");
    assert_eq!(error.code, ErrorCode::LimitExceeded, "{error}");
    assert_eq!(rev_parse(&small, "main"), None);

    let enough = scratch.path("enough.git");
    bare_repository(&enough);
    let mut roomy = transfer(&url);
    roomy.max_received_bytes = 4 << 20;
    fetch(&enough, &roomy, "refs/heads/main:refs/heads/main").unwrap();
    assert_eq!(rev_parse(&enough, "main"), rev_parse(&server_repo, "main"));
    assert_eq!(
        rev_parse(&enough, "main"),
        Some(git(&work, &["rev-parse", "HEAD"]))
    );
}

#[test]
fn libgit2_network_use_outside_a_transfer_fails() {
    ensure_registered().unwrap();
    let scratch = Scratch::new("outside");
    let repo = git2::Repository::init_bare(scratch.path("repo.git")).unwrap();
    for url in [
        "http://127.0.0.1:9/repo.git",
        "https://127.0.0.1:9/repo.git",
        "ssh://git@127.0.0.1:9/repo.git",
        "git@127.0.0.1:repo.git",
        "git://127.0.0.1:9/repo.git",
    ] {
        let mut remote = repo.remote_anonymous(url).unwrap();
        let error = remote
            .fetch(&["refs/heads/*:refs/heads/*"], None, None)
            .unwrap_err();
        let message = error.message();
        assert!(
            message.contains("no git transfer is in effect")
                || message.contains("git:// protocol is not supported"),
            "{url}: {message}"
        );
    }
}
