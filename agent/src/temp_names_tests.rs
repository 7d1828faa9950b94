use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use super::*;

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(tag: &str) -> Dir {
    let path = std::env::temp_dir().join(format!(
        "ci-temp-names-{tag}-{}-{:x}",
        std::process::id(),
        random()
    ));
    std::fs::create_dir(&path).unwrap();
    Dir(path)
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn name_for(owner: Owner) -> String {
    format!(
        "{PREFIX}{}-{}-{}-{:016x}",
        owner.ns, owner.pid, owner.start, 7
    )
}

/// A pid that ran in this namespace and has exited.
fn exited_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn names_record_this_process_and_parse_back() {
    let me = this_process().unwrap();
    let name = temp_name();
    assert_eq!(owner_of(name.to_bytes()), Some(me));
    assert_ne!(temp_name(), name);
    assert_eq!(owner_of(b".container-isolation-tmp-1-2-3"), None);
    assert_eq!(
        owner_of(b".container-isolation-tmp-1-2-3-0000000000000007-x"),
        None
    );
    assert_eq!(owner_of(b"notes.txt"), None);
}

#[test]
fn a_stale_temporary_is_removed_and_a_live_owners_and_a_symlink_are_left() {
    let dir = scratch("sweep");
    let me = this_process().unwrap();
    let gone = Owner {
        pid: exited_pid(),
        ..me
    };
    let restarted = Owner {
        start: me.start + 1,
        ..me
    };
    let other_namespace = Owner {
        ns: me.ns + 1,
        ..gone
    };
    let (stale, reused, live, link, foreign) = (
        name_for(gone),
        name_for(restarted),
        name_for(me),
        name_for(Owner {
            pid: gone.pid + 1,
            ..gone
        }),
        name_for(other_namespace),
    );
    for name in [&stale, &reused, &live, &foreign, &"keep.txt".to_string()] {
        std::fs::write(dir.0.join(name), b"x").unwrap();
    }
    let outside = scratch("outside");
    std::fs::write(outside.0.join("precious"), b"p").unwrap();
    std::os::unix::fs::symlink(outside.0.join("precious"), dir.0.join(&link)).unwrap();

    let held = std::fs::File::open(&dir.0).unwrap();
    assert_eq!(sweep(held.as_raw_fd()), 2);

    let mut left = vec![live, link, foreign, "keep.txt".to_string()];
    left.sort();
    assert_eq!(names(&dir.0), left);
    assert_eq!(std::fs::read(outside.0.join("precious")).unwrap(), b"p");
}
