//! The checks on URLs, ssh arguments and credentials that run before anything connects.

use crate::error::ErrorCode;
use crate::git_transport::ssh_command::{self, SshTarget};
use crate::git_transport::{with_transfer, Credentials, RemoteKind, RemoteUrl, Secret};
use std::path::PathBuf;

#[test]
fn accepted_urls_and_their_kinds() {
    for (text, kind, loopback) in [
        (
            "https://github.com/owner/repo.git",
            RemoteKind::Https,
            false,
        ),
        ("http://127.0.0.1:8080/repo.git", RemoteKind::Http, true),
        ("http://localhost/repo", RemoteKind::Http, true),
        ("http://[::1]:80/repo", RemoteKind::Http, true),
        ("https://127.9.9.9/r", RemoteKind::Https, true),
        (
            "ssh://git@example.com:2222/srv/repo.git",
            RemoteKind::Ssh,
            false,
        ),
        ("git+ssh://example.com/repo", RemoteKind::Ssh, false),
        ("ssh+git://example.com/repo", RemoteKind::Ssh, false),
        ("git@github.com:owner/repo.git", RemoteKind::Ssh, false),
        ("localhost:repo.git", RemoteKind::Ssh, true),
        ("git@[::1]:repo.git", RemoteKind::Ssh, true),
        ("file:///srv/repo.git", RemoteKind::Local, false),
        ("/srv/my repos/repo.git", RemoteKind::Local, false),
    ] {
        let url = RemoteUrl::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!((url.kind(), url.is_loopback()), (kind, loopback), "{text}");
    }
    assert_eq!(
        RemoteUrl::parse("git@github.com:o/r.git").unwrap().as_str(),
        "git@github.com:o/r.git"
    );
    assert_eq!(
        RemoteUrl::parse("HTTPS://Example.COM/r").unwrap().as_str(),
        "https://example.com/r"
    );
}

#[test]
fn refused_urls_are_invalid_arguments() {
    for text in [
        "",
        "git://example.com/repo.git",
        "ext::sh -c touch% /tmp/pwned",
        "ext::ssh",
        "fd::17",
        "-oProxyCommand=touch /tmp/x:repo",
        "https://user:pw-Secret-1@example.com/repo.git",
        "ssh://git:pw-Secret-1@example.com/repo.git",
        "user:pw-Secret-1@example.com:repo.git",
        "https://example.com/repo\n.git",
        "ssh://exa mple.com/repo",
        "https:///repo.git",
        "https://example.com",
        "https://example.com/",
        "ssh://example.com",
        "example.com:",
        "-host:repo",
        "ssh://-oProxyCommand=x/repo",
        "-user@host:repo",
        "https://example.com/repo.git?token=abc",
        "relative/path",
        "/srv/a:b",
        "ftp://example.com/repo.git",
    ] {
        let error = RemoteUrl::parse(text).expect_err(text);
        assert_eq!(error.code, ErrorCode::InvalidArgument, "{text}");
        assert!(!error.message.contains("pw-Secret-1"), "{error}");
    }
}

fn target(text: &str) -> SshTarget {
    ssh_command::target(&RemoteUrl::parse(text).unwrap()).unwrap()
}

#[test]
fn ssh_targets_are_read_as_git_reads_them() {
    let scp = target("git@github.com:owner/repo.git");
    assert_eq!(
        (
            scp.host.as_str(),
            scp.port,
            scp.user.as_deref(),
            scp.path.as_str()
        ),
        ("github.com", None, Some("git"), "owner/repo.git")
    );
    let url = target("ssh://me@example.com:2222/srv/repo.git");
    assert_eq!(
        (
            url.host.as_str(),
            url.port,
            url.user.as_deref(),
            url.path.as_str()
        ),
        ("example.com", Some(2222), Some("me"), "/srv/repo.git")
    );
    assert_eq!(target("ssh://example.com/~/repo.git").path, "~/repo.git");
    assert_eq!(
        target("ssh://example.com/~alice/repo.git").path,
        "~alice/repo.git"
    );
    assert_eq!(target("ssh://example.com/a%20b.git").path, "/a b.git");
    assert_eq!(target("[::1]:repo.git").host, "::1");
    assert_eq!(target("example.com:~/repo.git").path, "~/repo.git");
}

#[test]
fn the_remote_command_is_single_quoted_and_refuses_what_would_escape() {
    assert_eq!(
        ssh_command::remote_command("git-upload-pack", "/srv/a b.git").unwrap(),
        "git-upload-pack '/srv/a b.git'"
    );
    for path in ["it's.git", "a!b", "-x", "a\nb", ""] {
        let error = ssh_command::remote_command("git-upload-pack", path).expect_err(path);
        assert_eq!(error.code, ErrorCode::InvalidArgument);
    }
    let url = RemoteUrl::parse("example.com:it's.git").unwrap();
    let target = ssh_command::target(&url).unwrap();
    assert!(ssh_command::command(&target, None, "git-receive-pack").is_err());
}

#[test]
fn the_ssh_argv_is_options_then_the_host_then_one_remote_command() {
    let key = std::env::temp_dir().join(format!("ci-gt-key-{}", uuid::Uuid::new_v4()));
    std::fs::write(&key, "").unwrap();
    let credentials = Credentials::Ssh {
        key_file: Some(key.clone()),
        known_hosts_file: Some(PathBuf::from("/etc/hosts")),
    };
    let target = target("ssh://git@example.com:2222/srv/repo.git");
    let command = ssh_command::command(&target, Some(&credentials), "git-upload-pack").unwrap();
    let args: Vec<String> = command
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let expected = [
        "-o",
        "BatchMode=yes",
        "-o",
        "StrictHostKeyChecking=yes",
        "-o",
        "ControlMaster=no",
        "-o",
        "ControlPath=none",
        "-o",
        "UserKnownHostsFile=/etc/hosts",
        "-i",
        key.to_str().unwrap(),
        "-o",
        "IdentitiesOnly=yes",
        "-p",
        "2222",
        "-l",
        "git",
        "--",
        "example.com",
        "git-upload-pack '/srv/repo.git'",
    ];
    assert_eq!(args, expected);
    assert_eq!(command.get_program(), "ssh");
    std::fs::remove_file(key).unwrap();
}

#[test]
fn secrets_never_show_in_debug_or_display() {
    let credentials = Credentials::Basic {
        username: "alice".into(),
        password: Secret::new("hunter2-token".into()),
    };
    let mut transfer = super::fixtures::transfer("https://example.com/repo.git");
    transfer.credentials = Some(credentials.clone());
    for text in [
        format!("{credentials:?}"),
        format!("{transfer:?}"),
        format!("{transfer:#?}"),
        format!("{}", Secret::new("hunter2-token".into())),
    ] {
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("<redacted>"), "{text}");
    }
}

#[test]
fn credentials_that_do_not_fit_the_url_are_refused_before_anything_runs() {
    let basic = Credentials::Basic {
        username: "alice".into(),
        password: Secret::new("pw".into()),
    };
    let ssh = Credentials::Ssh {
        key_file: None,
        known_hosts_file: None,
    };
    let missing_key = Credentials::Ssh {
        key_file: Some(PathBuf::from("/nonexistent/key")),
        known_hosts_file: None,
    };
    let spaced = Credentials::Ssh {
        key_file: None,
        known_hosts_file: Some(PathBuf::from("/tmp/a b")),
    };
    for (url, credentials) in [
        ("ssh://example.com/repo", basic.clone()),
        ("https://example.com/repo", ssh),
        ("http://git.example.com/repo", basic),
        ("ssh://example.com/repo", missing_key),
        ("ssh://example.com/repo", spaced),
    ] {
        let mut transfer = super::fixtures::transfer(url);
        transfer.credentials = Some(credentials);
        let error = with_transfer(&transfer, |_| -> Result<(), git2::Error> {
            panic!("{url}: ran")
        })
        .unwrap_err();
        assert_eq!(error.code, ErrorCode::InvalidArgument, "{url}: {error}");
    }
    let mut transfer = super::fixtures::transfer("https://example.com/repo");
    transfer.ca_certificate = Some("not a certificate".into());
    let error = with_transfer(&transfer, |_| Ok(())).unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidArgument, "{error}");
}
