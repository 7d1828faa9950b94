//! Push and fetch over smart HTTP(S) against `git http-backend`, checked with the git CLI.

use super::fixtures::*;
use crate::error::ErrorCode;
use crate::git_transport::{with_transfer, Credentials, Secret, Transfer};
use std::time::Instant;

const USER: &str = "alice";
const PASSWORD: &str = "s3cret-Token-0f-alice";

fn basic(password: &str) -> Option<Credentials> {
    Some(Credentials::Basic {
        username: USER.into(),
        password: Secret::new(password.into()),
    })
}

/// An HTTPS server (self-signed) with basic auth and a request log, and a bare repository.
/// Fields drop in order: the server stops before its directory is removed.
struct HttpsSetup {
    server: HttpServer,
    ca: String,
    scratch: Scratch,
}

impl HttpsSetup {
    fn new(tag: &str) -> HttpsSetup {
        let scratch = Scratch::new(tag);
        let (cert, key) = self_signed_certificate(&scratch.0);
        bare_repository(&scratch.path("srv/repo.git"));
        let root = scratch.path("srv");
        let log = scratch.path("requests.log");
        let server = HttpServer::start(&[
            "--root",
            root.to_str().unwrap(),
            "--tls",
            cert.to_str().unwrap(),
            key.to_str().unwrap(),
            "--user",
            USER,
            "--password",
            PASSWORD,
            "--requests-log",
            log.to_str().unwrap(),
        ]);
        let ca = std::fs::read_to_string(&cert).unwrap();
        HttpsSetup {
            scratch,
            server,
            ca,
        }
    }

    fn transfer(&self, credentials: Option<Credentials>, with_ca: bool) -> Transfer {
        let mut transfer = transfer(&format!("https://127.0.0.1:{}/repo.git", self.server.port));
        transfer.credentials = credentials;
        transfer.ca_certificate = with_ca.then(|| self.ca.clone());
        transfer
    }

    fn requests_log(&self) -> String {
        std::fs::read_to_string(self.scratch.path("requests.log")).unwrap_or_default()
    }
}

/// The password shows nowhere in the log: not in clear, not as basic-auth base64.
fn assert_log_keeps_the_secret(log: &str) {
    use base64::Engine as _;
    let token = base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{PASSWORD}"));
    assert!(!log.contains(PASSWORD) && !log.contains(&token), "{log}");
    for line in log.lines() {
        let entry: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(entry["headers"].get("authorization").is_none(), "{line}");
    }
}

#[test]
fn https_push_then_fetch_with_basic_auth_and_the_ca() {
    let setup = HttpsSetup::new("https-push");
    let work = setup.scratch.path("work");
    let head = work_repository(&work, 3);
    let transfer = setup.transfer(basic(PASSWORD), true);

    let started = Instant::now();
    push(&work, &transfer, "refs/heads/main:refs/heads/feature").unwrap();
    eprintln!("https push: {:?}", started.elapsed());
    let server_repo = setup.scratch.path("srv/repo.git");
    assert_eq!(
        rev_parse(&server_repo, "refs/heads/feature").as_deref(),
        Some(head.as_str())
    );

    let back = setup.scratch.path("back.git");
    bare_repository(&back);
    let started = Instant::now();
    fetch(&back, &transfer, "refs/heads/feature:refs/heads/fetched").unwrap();
    eprintln!("https fetch: {:?}", started.elapsed());
    assert_eq!(
        rev_parse(&back, "refs/heads/fetched").as_deref(),
        Some(head.as_str())
    );
    let log = git(&back, &["log", "--format=%s", "fetched"]);
    assert_eq!(log, "commit 2\ncommit 1\ncommit 0");

    let requests = setup.requests_log();
    assert_log_keeps_the_secret(&requests);
    let lines: Vec<serde_json::Value> = requests
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    eprintln!("https requests: {}", lines.len());
    assert!(lines
        .iter()
        .all(|l| l["authorization"] == "present" && l["status"] == 200));
    assert!(lines
        .iter()
        .all(|l| l["headers"]["user-agent"] == "git/2.0 (container-isolation)"));
    let posts: Vec<&str> = lines
        .iter()
        .filter(|l| l["method"] == "POST")
        .map(|l| l["url"].as_str().unwrap())
        .collect();
    assert_eq!(
        posts,
        ["/repo.git/git-receive-pack", "/repo.git/git-upload-pack"]
    );
}

#[test]
fn refused_or_missing_credentials_are_git_auth_and_the_password_shows_nowhere() {
    let setup = HttpsSetup::new("https-auth");
    let work = setup.scratch.path("work");
    work_repository(&work, 1);

    let wrong = push(
        &work,
        &setup.transfer(basic("not-the-password"), true),
        "main",
    )
    .unwrap_err();
    assert_eq!(wrong.code, ErrorCode::GitAuth, "{wrong}");
    assert!(!wrong.message.contains("not-the-password"), "{wrong}");
    eprintln!("wrong password: {wrong}");

    let none = push(&work, &setup.transfer(None, true), "main").unwrap_err();
    assert_eq!(none.code, ErrorCode::GitAuth, "{none}");
    eprintln!("no credentials: {none}");

    let right = setup.transfer(basic(PASSWORD), true);
    push(&work, &right, "refs/heads/main:refs/heads/main").unwrap();
    assert!(rev_parse(&setup.scratch.path("srv/repo.git"), "main").is_some());
    let log = setup.requests_log();
    assert_log_keeps_the_secret(&log);
    assert!(!log.contains("not-the-password"));
    let statuses: Vec<String> = log
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|l| format!("{} {}", l["authorization"], l["status"]))
        .collect();
    assert_eq!(
        statuses[..2],
        ["\"present\" 401".to_string(), "\"absent\" 401".to_string()]
    );
}

#[test]
fn https_without_the_ca_fails_on_the_certificate() {
    let setup = HttpsSetup::new("https-noca");
    let work = setup.scratch.path("work");
    work_repository(&work, 1);
    let error = push(&work, &setup.transfer(basic(PASSWORD), false), "main").unwrap_err();
    assert_eq!(error.code, ErrorCode::Git, "{error}");
    assert!(
        error.message.to_lowercase().contains("certificate"),
        "{error}"
    );
    assert!(
        error
            .message
            .contains(&format!("127.0.0.1:{}", setup.server.port)),
        "{error}"
    );
    assert!(!error.message.contains(PASSWORD));
    eprintln!("no CA: {error}");
    assert_eq!(
        setup.requests_log(),
        "",
        "no request got through the TLS handshake"
    );
}

#[test]
fn credentials_over_plain_http_go_only_to_a_loopback_host() {
    let mut transfer = transfer("http://git.example.com/repo.git");
    transfer.credentials = basic(PASSWORD);
    let mut called = false;
    let error = with_transfer(&transfer, |_| {
        called = true;
        Ok(())
    })
    .unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidArgument, "{error}");
    assert!(!called, "refused before anything ran");
    assert!(!error.message.contains(PASSWORD));

    let scratch = Scratch::new("http-loopback");
    bare_repository(&scratch.path("srv/repo.git"));
    let root = scratch.path("srv");
    let server = HttpServer::start(&[
        "--root",
        root.to_str().unwrap(),
        "--user",
        USER,
        "--password",
        PASSWORD,
    ]);
    let work = scratch.path("work");
    let head = work_repository(&work, 2);
    let mut transfer =
        super::fixtures::transfer(&format!("http://127.0.0.1:{}/repo.git", server.port));
    transfer.credentials = basic(PASSWORD);
    push(&work, &transfer, "refs/heads/main:refs/heads/main").unwrap();
    assert_eq!(rev_parse(&scratch.path("srv/repo.git"), "main"), Some(head));
}
