//! File operations: whole writes and reads, stat (following symlinks or not), mkdir -p,
//! directory listings, abandoned writes, the caller's permissions, tmpfs, and files that
//! are not regular files.

use container_isolation_agent::protocol::{Creds, FileKind, Message, Stat};

use super::support::*;

fn stat(agent: &mut Agent, path: &str, follow: bool) -> Stat {
    match agent.ask(Message::StatPath {
        path: path.into(),
        follow,
        creds: root(),
    }) {
        Message::Stat(stat) => stat,
        other => panic!("stat {path}: {other:?}"),
    }
}

fn names(agent: &mut Agent, path: &str, creds: Creds) -> Result<Vec<String>, Failure> {
    let id = agent.request(&Message::ReadDir {
        path: path.into(),
        creds,
    });
    let mut names = Vec::new();
    loop {
        match agent.recv(id) {
            Message::Names(more) => names.extend(more),
            Message::End => return Ok(names),
            other => return Err(Failure::of(other)),
        }
    }
}

fn errno_of(reply: &Message) -> i32 {
    match reply {
        Message::Failed { errno, .. } => *errno,
        other => panic!("expected Failed, got {other:?}"),
    }
}

#[test]
fn a_written_file_reads_back_the_same() {
    if !docker_available() {
        return;
    }
    let container = Container::debian();
    let mut agent = container.agent();
    let data = noise(3 << 20, 1);
    assert_eq!(agent.write("/tmp/big", root(), &data), Message::Done);
    assert!(agent.read("/tmp/big", root()).unwrap() == data);
    // What the container sees is the same (the first bytes, and the size).
    assert_eq!(container.sh("stat -c %s /tmp/big").trim(), "3145728");
    let head = container.sh("head -c 16 /tmp/big | od -An -tx1 | tr -d ' \\n'");
    let expected: String = data[..16].iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(head, expected);
    // Replacing keeps the mode; a new file gets 0666 & ~umask.
    container.sh("chmod 640 /tmp/big");
    assert_eq!(agent.write("/tmp/big", root(), b"short"), Message::Done);
    assert_eq!(agent.read("/tmp/big", root()).unwrap(), b"short");
    assert_eq!(stat(&mut agent, "/tmp/big", true).mode, 0o640);
    let reply = agent.write("/tmp/no/such/dir", root(), b"x");
    assert_eq!(errno_of(&reply), libc::ENOENT, "{reply:?}");
    assert_eq!(agent.write("/tmp/empty", root(), b""), Message::Done);
    assert_eq!(agent.read("/tmp/empty", root()).unwrap(), b"");
    assert_eq!(stat(&mut agent, "/tmp/empty", true).mode, 0o644);
    assert_eq!(
        container
            .sh("ls -a /tmp | grep -c container-isolation || true")
            .trim(),
        "0"
    );
}

#[test]
fn stat_of_files_dirs_symlinks_and_nothing() {
    if !docker_available() {
        return;
    }
    let container = Container::busybox();
    let mut agent = container.agent();
    container.sh(
        "printf 12345 > /tmp/f && mkdir /tmp/d && ln -s f /tmp/link && ln -s nowhere /tmp/dangling",
    );
    let file = stat(&mut agent, "/tmp/f", true);
    assert_eq!(
        (file.kind, file.size, file.mode),
        (FileKind::File, 5, 0o644)
    );
    let mtime: i64 = container.sh("stat -c %Y /tmp/f").trim().parse().unwrap();
    assert_eq!(file.mtime_sec, mtime);
    assert_eq!(stat(&mut agent, "/tmp/d", true).kind, FileKind::Dir);
    assert_eq!(stat(&mut agent, "/tmp/link", true).kind, FileKind::File);
    assert_eq!(stat(&mut agent, "/tmp/link", true).size, 5);
    let link = stat(&mut agent, "/tmp/link", false);
    assert_eq!((link.kind, link.size), (FileKind::Other, 1));
    assert_eq!(
        stat(&mut agent, "/tmp/dangling", true).kind,
        FileKind::Missing
    );
    assert_eq!(
        stat(&mut agent, "/tmp/dangling", false).kind,
        FileKind::Other
    );
    assert_eq!(
        stat(&mut agent, "/tmp/missing", true).kind,
        FileKind::Missing
    );
    assert_eq!(
        stat(&mut agent, "/tmp/f/below", true).kind,
        FileKind::Missing
    );
    // Writing through a symlink replaces the file it names and keeps the link.
    assert_eq!(agent.write("/tmp/link", root(), b"new"), Message::Done);
    assert_eq!(stat(&mut agent, "/tmp/link", false).kind, FileKind::Other);
    assert_eq!(container.sh("cat /tmp/f"), "new");
    assert_eq!(agent.write("/tmp/dangling", root(), b"made"), Message::Done);
    assert_eq!(container.sh("cat /tmp/nowhere"), "made");
}

#[test]
fn mkdir_makes_every_missing_parent() {
    if !docker_available() {
        return;
    }
    let container = Container::busybox();
    let mut agent = container.agent();
    let mkdir = |agent: &mut Agent, path: &str, creds: Creds| {
        agent.ask(Message::Mkdir {
            path: path.into(),
            creds,
        })
    };
    assert_eq!(mkdir(&mut agent, "/tmp/a/b/c", root()), Message::Done);
    assert_eq!(mkdir(&mut agent, "/tmp/a/b/c", root()), Message::Done);
    assert_eq!(mkdir(&mut agent, "/tmp/a/b/d/", root()), Message::Done);
    assert_eq!(stat(&mut agent, "/tmp/a/b/d", true).kind, FileKind::Dir);
    assert_eq!(stat(&mut agent, "/tmp/a/b/c", true).kind, FileKind::Dir);
    container.sh("touch /tmp/file");
    assert_eq!(
        errno_of(&mkdir(&mut agent, "/tmp/file", root())),
        libc::EEXIST
    );
    assert_eq!(
        errno_of(&mkdir(&mut agent, "/tmp/file/x", root())),
        libc::ENOTDIR
    );
    // As a user: the new directory is theirs; where they may not write, EACCES.
    container.sh("mkdir -p /home/agent && chown 1000:1000 /home/agent");
    assert_eq!(mkdir(&mut agent, "/home/agent/x/y", user()), Message::Done);
    assert_eq!(
        container.sh("stat -c %u:%g /home/agent/x/y").trim(),
        "1000:1000"
    );
    assert_eq!(errno_of(&mkdir(&mut agent, "/etc/x", user())), libc::EACCES);
}

#[test]
fn a_directory_of_a_thousand_entries_is_listed_whole() {
    if !docker_available() {
        return;
    }
    let container = Container::busybox();
    let mut agent = container.agent();
    container.sh("mkdir /tmp/many && cd /tmp/many && for i in $(seq 1000); do : > f$i; done");
    let mut got = names(&mut agent, "/tmp/many", root()).unwrap();
    got.sort();
    let mut expected: Vec<String> = (1..=1000).map(|i| format!("f{i}")).collect();
    expected.sort();
    assert_eq!(got, expected);
    assert_eq!(
        names(&mut agent, "/tmp/empty-none", root()).map_err(|f| f.errno),
        Err(libc::ENOENT)
    );
}

#[test]
fn a_listing_larger_than_a_frame_arrives_in_pieces() {
    if !docker_available() {
        return;
    }
    let container = Container::busybox();
    let mut agent = container.agent();
    // 12 000 names of 100 bytes: beyond one frame (1 MiB).
    let long = "x".repeat(94);
    container.sh(&format!(
        "mkdir /tmp/huge && cd /tmp/huge && seq -w 12000 | while read i; do : > {long}$i; done"
    ));
    let got = names(&mut agent, "/tmp/huge", root()).unwrap();
    assert_eq!(got.len(), 12_000);
    assert!(got.iter().all(|n| n.len() == 99 && n.starts_with(&long)));
}

#[test]
fn an_aborted_write_leaves_the_old_content_and_nothing_else() {
    if !docker_available() {
        return;
    }
    let container = Container::start(BUSYBOX, &["--tmpfs", "/scratch"], KEEP_ALIVE);
    let mut agent = container.agent();
    for dir in ["/tmp", "/scratch"] {
        let path = format!("{dir}/kept");
        assert_eq!(agent.write(&path, root(), b"old"), Message::Done);
        let id = agent.request(&Message::Write {
            path: path.clone(),
            creds: root(),
        });
        agent.send(id, &Message::Data(noise(500_000, 2)));
        agent.send(id, &Message::Abort);
        assert_eq!(errno_of(&agent.recv(id)), libc::ECANCELED);
        assert_eq!(agent.read(&path, root()).unwrap(), b"old");
        assert_eq!(
            container.sh(&format!("ls -a {dir}")),
            ".\n..\nkept\n",
            "{dir}"
        );
    }
}

#[test]
fn the_callers_permissions_apply() {
    if !docker_available() {
        return;
    }
    let container = Container::debian();
    let mut agent = container.agent();
    container.sh("mkdir -m 755 /owned && echo secret > /owned/s && chmod 600 /owned/s");
    let reply = agent.write("/owned/new", user(), b"x");
    assert_eq!(errno_of(&reply), libc::EACCES, "{reply:?}");
    assert_eq!(container.sh("ls -a /owned"), ".\n..\ns\n");
    let denied = agent.read("/owned/s", user()).unwrap_err();
    assert_eq!(denied.errno, libc::EACCES);
    assert!(denied.message.contains("'/owned/s'"), "{denied:?}");
    assert_eq!(agent.read("/owned/s", root()).unwrap(), b"secret\n");
    // A file the user writes is theirs.
    container.sh("mkdir -p /home/agent && chown 1000:1000 /home/agent");
    assert_eq!(agent.write("/home/agent/mine", user(), b"x"), Message::Done);
    assert_eq!(
        container.sh("stat -c %u:%g /home/agent/mine").trim(),
        "1000:1000"
    );
    // Replacing a user's file as root keeps its owner.
    assert_eq!(agent.write("/home/agent/mine", root(), b"y"), Message::Done);
    assert_eq!(
        container.sh("stat -c %u:%g /home/agent/mine").trim(),
        "1000:1000"
    );
    let listing = names(&mut agent, "/root", user()).unwrap_err();
    assert_eq!(listing.errno, libc::EACCES);
}

#[test]
fn a_file_the_caller_may_not_write_is_not_replaced() {
    if !docker_available() {
        return;
    }
    let container = Container::busybox();
    let mut agent = container.agent();
    // The directory is the user's: renaming over these would be allowed, writing not.
    container.sh(
        "mkdir -p /home/agent && chown 1000:1000 /home/agent && cd /home/agent && \
         echo ro > ro && chown 1000:1000 ro && chmod 444 ro && echo root > root-owned",
    );
    for file in ["/home/agent/ro", "/home/agent/root-owned"] {
        assert_eq!(
            errno_of(&agent.write(file, user(), b"x")),
            libc::EACCES,
            "{file}"
        );
    }
    assert_eq!(
        container.sh("cd /home/agent && cat ro root-owned && ls -a"),
        "ro\nroot\n.\n..\nro\nroot-owned\n"
    );
    // Root may.
    assert_eq!(agent.write("/home/agent/ro", root(), b"x"), Message::Done);
}

#[test]
fn files_on_a_tmpfs_mount() {
    if !docker_available() {
        return;
    }
    let container = Container::start(DEBIAN, &["--tmpfs", "/scratch"], KEEP_ALIVE);
    let mut agent = container.agent();
    container.sh("echo from-tmpfs > /scratch/t");
    assert_eq!(agent.read("/scratch/t", root()).unwrap(), b"from-tmpfs\n");
    let data = noise(1 << 20, 9);
    assert_eq!(agent.write("/scratch/w", root(), &data), Message::Done);
    assert!(agent.read("/scratch/w", root()).unwrap() == data);
}

#[test]
fn only_regular_files_are_read() {
    if !docker_available() {
        return;
    }
    let container = Container::debian();
    let mut agent = container.agent();
    container.sh("mkfifo /tmp/fifo");
    for path in ["/dev/null", "/tmp/fifo", "/dev/zero"] {
        let failure = agent.read(path, root()).unwrap_err();
        assert_eq!(failure.errno, libc::EINVAL, "{path}: {failure:?}");
    }
    assert_eq!(agent.read("/tmp", root()).unwrap_err().errno, libc::EISDIR);
    assert_eq!(
        agent.read("/tmp/none", root()).unwrap_err().errno,
        libc::ENOENT
    );
    // Nor written: a write to a fifo or a device would not be a file put in place.
    assert_eq!(
        errno_of(&agent.write("/tmp/fifo", root(), b"x")),
        libc::EINVAL
    );
    assert_eq!(errno_of(&agent.write("/tmp", root(), b"x")), libc::EISDIR);
}
