//! What the HTTP transport follows and refuses of a server: redirects (same origin only,
//! at most five), a dumb HTTP server, a remote rewritten to another URL.

use super::fixtures::*;
use crate::error::ErrorCode;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

#[test]
fn a_redirect_on_the_same_host_is_followed_and_the_post_goes_to_its_target() {
    let scratch = Scratch::new("http-redirect");
    bare_repository(&scratch.path("srv/new/repo.git"));
    let (root, log) = (scratch.path("srv"), scratch.path("requests.log"));
    let server = HttpServer::start(&[
        "--root",
        root.to_str().unwrap(),
        "--redirect-from",
        "/old/",
        "--redirect-to",
        "/new/",
        "--requests-log",
        log.to_str().unwrap(),
    ]);
    let work = scratch.path("work");
    let head = work_repository(&work, 1);
    let transfer = transfer(&format!("http://127.0.0.1:{}/old/repo.git", server.port));
    push(&work, &transfer, "refs/heads/main:refs/heads/main").unwrap();
    assert_eq!(
        rev_parse(&scratch.path("srv/new/repo.git"), "main"),
        Some(head)
    );
    let requests: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|l| {
            format!(
                "{} {} {}",
                l["method"].as_str().unwrap(),
                l["url"].as_str().unwrap(),
                l["status"]
            )
        })
        .collect();
    assert_eq!(
        requests,
        [
            "GET /old/repo.git/info/refs?service=git-receive-pack 301",
            "GET /new/repo.git/info/refs?service=git-receive-pack 200",
            "POST /new/repo.git/git-receive-pack 200",
        ]
    );
}

#[test]
fn a_redirect_to_another_host_is_refused() {
    let scratch = Scratch::new("http-redirect-away");
    bare_repository(&scratch.path("srv/new/repo.git"));
    let (root, log) = (scratch.path("srv"), scratch.path("requests.log"));
    // The same server under another name: "localhost" is not "127.0.0.1".
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let elsewhere = format!(
        "http://localhost:{}/new/",
        probe.local_addr().unwrap().port()
    );
    let server = HttpServer::start(&[
        "--root",
        root.to_str().unwrap(),
        "--redirect-from",
        "/old/",
        "--redirect-to",
        &elsewhere,
        "--requests-log",
        log.to_str().unwrap(),
    ]);
    let work = scratch.path("work");
    work_repository(&work, 1);
    let transfer = transfer(&format!("http://127.0.0.1:{}/old/repo.git", server.port));
    let error = push(&work, &transfer, "main").unwrap_err();
    assert_eq!(error.code, ErrorCode::Git, "{error}");
    assert!(error.message.contains("refused"), "{error}");
    eprintln!("redirect away: {error}");
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1);
}

#[test]
fn a_remote_rewritten_by_insteadof_gets_no_request() {
    let scratch = Scratch::new("http-insteadof");
    bare_repository(&scratch.path("srv/repo.git"));
    let (root, log) = (scratch.path("srv"), scratch.path("requests.log"));
    let other = HttpServer::start(&[
        "--root",
        root.to_str().unwrap(),
        "--requests-log",
        log.to_str().unwrap(),
    ]);
    let work = scratch.path("work");
    work_repository(&work, 1);
    let transfer = transfer("http://127.0.0.1:9/repo.git");
    let rewrite = format!("url.http://127.0.0.1:{}/.insteadOf", other.port);
    git(&work, &["config", &rewrite, "http://127.0.0.1:9/"]);
    let error = push(&work, &transfer, "main").unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidArgument, "{error}");
    assert_eq!(std::fs::read_to_string(&log).unwrap_or_default(), "");
}

#[test]
fn more_than_five_redirects_are_refused() {
    let scratch = Scratch::new("http-redirect-loop");
    bare_repository(&scratch.path("srv/loop/repo.git"));
    let (root, log) = (scratch.path("srv"), scratch.path("requests.log"));
    let server = HttpServer::start(&[
        "--root",
        root.to_str().unwrap(),
        "--redirect-from",
        "/loop/",
        "--redirect-to",
        "/loop/",
        "--requests-log",
        log.to_str().unwrap(),
    ]);
    let into = scratch.path("into.git");
    bare_repository(&into);
    let transfer = transfer(&format!("http://127.0.0.1:{}/loop/repo.git", server.port));
    let error = fetch(&into, &transfer, "refs/heads/*:refs/heads/*").unwrap_err();
    eprintln!("redirect loop: {error}");
    assert_eq!(error.code, ErrorCode::Git, "{error}");
    assert!(error.message.contains("more than 5 redirects"), "{error}");
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 6);
}

/// `python3 -m http.server`: files only, the dumb HTTP protocol at best.
struct StaticServer {
    child: Child,
    port: u16,
}

impl StaticServer {
    fn start(dir: &std::path::Path) -> StaticServer {
        let mut child = Command::new("python3")
            .args([
                "-u",
                "-m",
                "http.server",
                "0",
                "--bind",
                "127.0.0.1",
                "--directory",
            ])
            .arg(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .split(" port ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("http.server printed {line:?}"));
        StaticServer { child, port }
    }
}

impl Drop for StaticServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_dumb_http_server_is_an_error_saying_so() {
    let scratch = Scratch::new("http-dumb");
    let repo = scratch.path("srv/repo.git");
    bare_repository(&repo);
    let work = scratch.path("work");
    work_repository(&work, 1);
    git(&work, &["push", "-q", repo.to_str().unwrap(), "main"]);
    run(Command::new("git")
        .arg("--git-dir")
        .arg(&repo)
        .arg("update-server-info"));
    let server = StaticServer::start(&scratch.path("srv"));
    let into = scratch.path("into.git");
    bare_repository(&into);
    let transfer = transfer(&format!("http://127.0.0.1:{}/repo.git", server.port));
    let error = fetch(&into, &transfer, "refs/heads/*:refs/heads/*").unwrap_err();
    eprintln!("dumb server: {error}");
    assert_eq!(error.code, ErrorCode::Git, "{error}");
    assert!(error.message.contains("dumb HTTP"), "{error}");
}
