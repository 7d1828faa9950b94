//! `push` to a bare repository on this machine (libgit2's local transport), checked with
//! the git CLI: the branch, a snapshot, a refused non-fast-forward, and the clone's own
//! remotes and rewrites unused.

use std::time::Duration;

use super::export::Session;
use super::*;
use crate::delivery::{push, Author, PushOptions, Pushed};
use crate::error::{Error, ErrorCode};
use crate::git_transport::{RemoteUrl, Transfer};

fn bare(dir: &Path) -> PathBuf {
    let path = dir.join("remote.git");
    git(dir, &["init", "-q", "--bare", "remote.git"]);
    path
}

fn push_to(
    s: &Session,
    remote: &Path,
    branch: &str,
    uncommitted: bool,
    force: bool,
) -> Result<Pushed, Error> {
    push_within(s, remote, (branch, uncommitted, force), Limits::default())
}

fn push_within(
    s: &Session,
    remote: &Path,
    (branch, uncommitted, force): (&str, bool, bool),
    limits: Limits,
) -> Result<Pushed, Error> {
    let transfer = Transfer {
        url: RemoteUrl::parse(&remote.display().to_string()).unwrap(),
        credentials: None,
        ca_certificate: None,
        timeout: Duration::from_secs(30),
        max_received_bytes: 1 << 30,
    };
    let opts = PushOptions {
        transfer,
        branch: branch.into(),
        force,
        uncommitted,
        message: "snapshot".into(),
    };
    let author = Author {
        name: "Host".into(),
        email: "host@example.com".into(),
    };
    push(
        s.clone.clone(),
        s.project.clone(),
        s.staging(),
        opts,
        author,
        limits,
    )
}

#[test]
fn push_sends_head_or_a_snapshot_and_refuses_a_non_fast_forward() {
    let s = Session::new("push");
    let remote = bare(&s.root.0);
    let clone = Repository::open(&s.clone).unwrap();
    write(&s.clone, "p.txt", "p\n");
    let head = commit_all(&clone, "agent").to_string();
    // The clone's own remote and rewrites point elsewhere: unused.
    let decoy = s.root.0.join("decoy.git");
    git(&s.root.0, &["init", "-q", "--bare", "decoy.git"]);
    let mut config = clone.config().unwrap();
    config
        .set_str("remote.origin.url", &decoy.display().to_string())
        .unwrap();
    config
        .set_str("remote.origin.pushurl", &decoy.display().to_string())
        .unwrap();
    config
        .set_str(
            &format!("url.{}.insteadOf", decoy.display()),
            &remote.display().to_string(),
        )
        .unwrap();

    let done = push_to(&s, &remote, "feature", false, false).unwrap();
    assert_eq!(done.commit.to_string(), head);
    assert_eq!(git(&remote, &["rev-parse", "feature"]).trim(), head);
    assert_eq!(git(&decoy, &["for-each-ref"]), "");

    write(&s.clone, "wip.txt", "wip\n");
    let snap = push_to(&s, &remote, "feature", true, false).unwrap();
    assert_eq!(git(&remote, &["rev-parse", "feature^"]).trim(), head);
    assert_eq!(git(&remote, &["show", "feature:wip.txt"]), "wip\n");
    let err = push_to(&s, &remote, "feature", false, false).unwrap_err();
    assert_eq!(err.code, ErrorCode::GitPushRejected, "{err}");
    assert_eq!(
        git(&remote, &["rev-parse", "feature"]).trim(),
        snap.commit.to_string()
    );
    push_to(&s, &remote, "feature", false, true).unwrap();
    assert_eq!(git(&remote, &["rev-parse", "feature"]).trim(), head);
    git(&remote, &["fsck", "--strict", "--no-dangling"]);
    assert_eq!(std::fs::read_dir(s.staging()).unwrap().count(), 0);
}

#[test]
fn a_hostile_object_is_not_pushed_and_a_late_push_sends_nothing() {
    let s = Session::new("push-hostile");
    let remote = bare(&s.root.0);
    let clone = Repository::open(&s.clone).unwrap();
    let blob = git(&s.project, &["rev-parse", "HEAD:a.txt"]);
    let mut raw = b"40000 dir\0".to_vec();
    raw.extend_from_slice(Oid::from_str(blob.trim()).unwrap().as_bytes());
    super::export::commit_raw_tree(&clone, &raw);
    let err = push_to(&s, &remote, "feature", false, false).unwrap_err();
    assert_eq!(err.code, ErrorCode::Git, "{err}");
    assert_eq!(git(&remote, &["for-each-ref"]), "");
    assert_eq!(git(&remote, &["count-objects"]), "0 objects, 0 kilobytes\n");

    let s = Session::new("push-late");
    let remote = bare(&s.root.0);
    let clone = Repository::open(&s.clone).unwrap();
    write(&s.clone, "p.txt", "p\n");
    commit_all(&clone, "agent");
    crate::delivery::write_pause::pause_before_writing(&s.staging(), Duration::from_millis(2500));
    let limits = Limits {
        timeout: Duration::from_millis(500),
        ..Limits::default()
    };
    let err = push_within(&s, &remote, ("late", false, false), limits).unwrap_err();
    assert_eq!(err.code, ErrorCode::Timeout, "{err}");
    std::thread::sleep(Duration::from_millis(3000));
    assert_eq!(git(&remote, &["for-each-ref"]), "");
}
