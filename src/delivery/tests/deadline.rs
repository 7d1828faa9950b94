//! `TIMEOUT` means nothing was written: an export or push whose work is still going when
//! its caller is answered never writes its ref (nor moves objects into the project)
//! afterwards, and one that began writing in time is waited for.

use std::time::{Duration, Instant};

use super::export::{object_counts, options, project_state, Session};
use super::*;
use crate::delivery::write_pause::pause_before_writing;
use crate::error::ErrorCode;

fn with_work(name: &str) -> Session {
    let s = Session::new(name);
    let clone = Repository::open(&s.clone).unwrap();
    write(&s.clone, "work.txt", "work\n");
    commit_all(&clone, "work");
    s
}

#[test]
fn an_export_past_its_deadline_writes_no_ref_ever() {
    let s = with_work("late-export");
    let before = (project_state(&s.project, "-"), object_counts(&s.project));
    pause_before_writing(&s.staging(), Duration::from_millis(2500));
    let limits = Limits {
        timeout: Duration::from_millis(500),
        ..Limits::default()
    };
    let started = Instant::now();
    let err = s.export_with(options("late"), limits).unwrap_err();
    assert_eq!(err.code, ErrorCode::Timeout, "{err}");
    assert!(
        started.elapsed() < Duration::from_millis(2300),
        "answered at the bound, not after the pause"
    );
    // The abandoned work wakes up after the pause and must find the door shut.
    std::thread::sleep(Duration::from_millis(3000));
    assert_eq!(
        before,
        (project_state(&s.project, "-"), object_counts(&s.project))
    );
    assert!(s
        .project
        .join(".git/refs/heads/late")
        .symlink_metadata()
        .is_err());
}

#[test]
fn an_export_that_began_writing_in_time_is_waited_for() {
    let s = with_work("in-time");
    pause_before_writing(&s.staging(), Duration::from_millis(200));
    let limits = Limits {
        timeout: Duration::from_secs(30),
        ..Limits::default()
    };
    let done = s.export_with(options("in-time"), limits).unwrap();
    assert_eq!(
        git(&s.project, &["rev-parse", "in-time"]).trim(),
        done.commit.to_string()
    );
}
