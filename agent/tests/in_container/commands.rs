//! Commands: the handshake, output and exit codes (`Spawned` always first), thousands in a
//! row, a program that cannot start, stdin carried byte for byte (and ended while another
//! command runs), output paced by a slow host, messages the agent does not expect, the
//! caller's user and directory, and a shell-less image.

use std::time::Duration;

use container_isolation_agent::protocol::{Message, Spawn, CHUNK, CONTROL, REPLY_WINDOW, VERSION};

use super::support::*;

#[test]
fn hello_is_answered_with_the_protocol_version() {
    if !docker_available() {
        return;
    }
    let container = Container::busybox();
    let mut agent = container.agent();
    agent.send(CONTROL, &Message::Hello { version: VERSION });
    match agent.recv(CONTROL) {
        Message::Welcome { version, pid } => {
            assert_eq!(version, VERSION);
            assert!(pid > 1, "the agent's pid in the container: {pid}");
        }
        other => panic!("Hello answered with {other:?}"),
    }
}

#[test]
fn output_and_exit_codes() {
    if !docker_available() {
        return;
    }
    let container = Container::busybox();
    let mut agent = container.agent();
    let ran = agent.run(&["echo", "hi"]);
    assert_eq!(
        (ran.stdout.as_slice(), ran.code, ran.signal),
        (&b"hi\n"[..], 0, 0)
    );
    let ran = agent.run(&["sh", "-c", "echo out; echo err >&2; exit 3"]);
    assert_eq!(ran.stdout, b"out\n");
    assert_eq!(ran.stderr, b"err\n");
    assert_eq!((ran.code, ran.signal), (3, 0));
}

/// Each command's socket to its reaper is closed by the thread that ran the previous one,
/// racing the next `Spawn`: when the reaper's end came out as fd 3 it used to be closed at
/// exec, and about one spawn in 2,000 failed with a broken pipe.
#[test]
fn thousands_of_commands_in_a_row_all_start() {
    if !docker_available() {
        return;
    }
    let container = Container::busybox();
    let mut agent = container.agent();
    for i in 0..4000 {
        let id = agent.request(&Message::Spawn(spawn_of(&["true"], false)));
        match agent.recv(id) {
            Message::Spawned { .. } => {}
            other => panic!("command {i} did not start: {other:?}"),
        }
        assert_eq!(agent.finish(id).code, 0, "command {i}");
    }
}

#[test]
fn spawned_comes_before_any_output() {
    if !docker_available() {
        return;
    }
    let container = Container::busybox();
    let mut agent = container.agent();
    let ids: Vec<u32> = (0..100)
        .map(|_| agent.request(&Message::Spawn(spawn_of(&["echo", "fast"], false))))
        .collect();
    for id in ids {
        match agent.recv(id) {
            Message::Spawned { pid } => assert!(pid > 1),
            other => panic!("before Spawned: {other:?}"),
        }
        assert_eq!(agent.finish(id).stdout, b"fast\n");
    }
}

#[test]
fn a_program_that_cannot_start_exits_126_with_the_reason_on_stderr() {
    if !docker_available() {
        return;
    }
    let container = Container::busybox();
    let mut agent = container.agent();
    let ran = agent.run(&["/no/such/program", "x"]);
    assert_eq!((ran.code, ran.signal), (126, 0));
    assert!(ran.stdout.is_empty());
    let said = String::from_utf8_lossy(&ran.stderr);
    assert!(
        said.contains("/no/such/program") && said.contains("No such file"),
        "stderr: {said}"
    );
    // Not executable: a directory.
    let ran = agent.run(&["/tmp"]);
    assert_eq!(ran.code, 126, "{:?}", String::from_utf8_lossy(&ran.stderr));
    // An empty argv is refused the same way, not a crash.
    let ran = agent.run(&[]);
    assert_eq!(ran.code, 126);
    // The agent still serves.
    assert_eq!(agent.run(&["true"]).code, 0);
}

#[test]
fn stdin_is_carried_byte_for_byte() {
    if !docker_available() {
        return;
    }
    let container = Container::busybox();
    let mut agent = container.agent();
    let id = agent.spawn(&["cat"], true);
    let small = b"a\0b\xff\n\0".to_vec();
    agent.stdin(id, &small);
    let ran = agent.finish(id);
    assert_eq!((ran.stdout, ran.code), (small, 0));

    let big = noise(1 << 20, 7);
    let id = agent.spawn(&["cat"], true);
    agent.stdin(id, &big);
    let ran = agent.finish(id);
    assert_eq!(ran.stdout.len(), big.len());
    assert!(ran.stdout == big, "1 MiB through cat came back changed");
    assert_eq!(ran.code, 0);

    // Without stdin the command reads /dev/null.
    let ran = agent.run(&["cat"]);
    assert_eq!((ran.stdout.len(), ran.code), (0, 0));
}

/// Reapers are forked from the agent: one started later must not hold a copy of an earlier
/// command's stdin pipe, or that command would never see its stdin end.
#[test]
fn stdin_ends_while_a_later_command_runs() {
    if !docker_available() {
        return;
    }
    let container = Container::busybox();
    let mut agent = container.agent();
    let reading = agent.spawn(&["cat"], true);
    let later = agent.spawn(&["sleep", "1000"], false);
    agent.stdin(reading, b"x");
    let mut seen = Vec::new();
    loop {
        match agent.try_recv(reading, Duration::from_secs(10)) {
            Some(Message::Exited { code, .. }) => {
                assert_eq!((seen.as_slice(), code), (&b"x"[..], 0));
                break;
            }
            Some(Message::Output { data, .. }) => seen.extend(data),
            Some(other) => panic!("cat: unexpected {other:?}"),
            None => panic!("cat did not see its stdin end while another command ran"),
        }
    }
    agent.send(later, &Message::Kill);
    assert_ne!(agent.finish(later).code, 0);
}

#[test]
fn output_larger_than_a_chunk_arrives_whole() {
    if !docker_available() {
        return;
    }
    let container = Container::busybox();
    let mut agent = container.agent();
    let size = 3 * CHUNK + 17;
    let ran = agent.run(&["sh", "-c", &format!("head -c {size} /dev/zero")]);
    assert_eq!((ran.stdout.len(), ran.code), (size, 0));
}

#[test]
fn output_stops_at_the_reply_window_and_an_abort_lets_the_command_finish_unread() {
    if !docker_available() {
        return;
    }
    let container = Container::busybox();
    let mut agent = container.agent();
    agent.granting = false;
    let id = agent.spawn(&["head", "-c", &(20 << 20).to_string(), "/dev/zero"], false);
    let mut sent = 0;
    while let Some(message) = agent.try_recv(id, Duration::from_secs(1)) {
        if let Message::Output { data, .. } = message {
            sent += data.len();
        }
    }
    let bound = REPLY_WINDOW as usize + CHUNK;
    assert!(
        sent > 0 && sent <= bound,
        "{sent} bytes sent without credit"
    );
    agent.send(id, &Message::Abort);
    let ran = agent.finish(id);
    assert_eq!(ran.code, 0);
    assert!(
        ran.stdout.len() <= CHUNK,
        "{} bytes after the abort",
        ran.stdout.len()
    );
}

#[test]
fn output_waits_for_a_slow_host_instead_of_filling_the_agents_memory() {
    if !docker_available() {
        return;
    }
    let container = Container::busybox();
    let mut agent = container.agent();
    agent.send(CONTROL, &Message::Hello { version: VERSION });
    let Message::Welcome { pid, .. } = agent.recv(CONTROL) else {
        panic!("no Welcome");
    };
    let size = 200 << 20;
    agent.pause(true);
    let id = agent.request(&Message::Spawn(spawn_of(
        &["head", "-c", &size.to_string(), "/dev/zero"],
        false,
    )));
    std::thread::sleep(Duration::from_secs(3));
    let status = container.exec(&["cat", &format!("/proc/{pid}/status")]);
    let rss_kib: usize = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap();
    agent.pause(false);
    assert!(matches!(agent.recv(id), Message::Spawned { .. }));
    let ran = agent.finish(id);
    assert_eq!((ran.stdout.len(), ran.code), (size, 0));
    assert!(
        rss_kib < 64 << 10,
        "the agent held {rss_kib} KiB for a slow host"
    );
}

#[test]
fn an_unexpected_message_is_refused_and_the_agent_serves_on() {
    if !docker_available() {
        return;
    }
    let container = Container::busybox();
    let mut agent = container.agent();
    // Nearly a frame of names: the refusal must still fit in a frame.
    // (Control characters, which a debug format spells out at length.)
    let names = Message::Names((0..9000).map(|i| format!("{i:\x01>100}")).collect());
    let id = agent.request(&names);
    match agent.recv(id) {
        Message::Failed { errno, message } => {
            assert_eq!(errno, libc::EINVAL);
            assert!(message.starts_with("unexpected message Names"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    // Stdin, a signal or data for no request: nothing happens.
    agent.send(77, &Message::Stdin(b"x".to_vec()));
    agent.send(78, &Message::Data(b"x".to_vec()));
    agent.send(79, &Message::End);
    agent.send(80, &Message::Signal { signo: 9 });
    assert_eq!(agent.recv(80), Message::Signalled { count: 0 });
    assert_eq!(agent.run(&["echo", "still"]).stdout, b"still\n");
}

#[test]
fn commands_run_as_the_given_user_in_the_given_directory_and_environment() {
    if !docker_available() {
        return;
    }
    let container = Container::debian();
    let mut agent = container.agent();
    let spawn = Spawn {
        argv: [
            "sh",
            "-c",
            "id -u; id -g; id -G; pwd; echo $HOME $A; env | wc -l",
        ]
        .map(String::from)
        .to_vec(),
        cwd: Some("/tmp".into()),
        replace_env: true,
        env: vec![
            ("A".into(), "b c".into()),
            ("PATH".into(), "/usr/bin:/bin".into()),
        ],
        creds: user(),
        home: Some("/home/agent".into()),
        stdin: false,
    };
    let id = agent.request(&Message::Spawn(spawn.clone()));
    assert!(matches!(agent.recv(id), Message::Spawned { .. }));
    let ran = agent.finish(id);
    let out = String::from_utf8_lossy(&ran.stdout).into_owned();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        ran.code,
        0,
        "{out} {}",
        String::from_utf8_lossy(&ran.stderr)
    );
    assert_eq!(&lines[..4], &["1000", "1000", "1000", "/tmp"], "{out}");
    // `home` is for when the environment does not say; a replaced one is what it is.
    assert_eq!(lines[4], "b c", "{out}");

    // An added-to environment gets HOME.
    let id = agent.request(&Message::Spawn(Spawn {
        argv: ["sh", "-c", "echo $HOME"].map(String::from).to_vec(),
        replace_env: false,
        env: vec![],
        ..spawn.clone()
    }));
    assert!(matches!(agent.recv(id), Message::Spawned { .. }));
    assert_eq!(agent.finish(id).stdout, b"/home/agent\n");

    // A directory the user may not enter: the command does not start.
    container.sh("mkdir -p /private && chmod 700 /private");
    let id = agent.request(&Message::Spawn(Spawn {
        cwd: Some("/private".into()),
        ..spawn
    }));
    assert!(matches!(agent.recv(id), Message::Spawned { .. }));
    let ran = agent.finish(id);
    assert_eq!(ran.code, 126, "{}", String::from_utf8_lossy(&ran.stderr));
}

#[test]
fn many_commands_at_once() {
    if !docker_available() {
        return;
    }
    let container = Container::busybox();
    let mut agent = container.agent();
    let ids: Vec<u32> = (0..20)
        .map(|i| {
            let script = format!("sleep 0.$((RANDOM % 3)); echo {i}; exit {i}");
            agent.request(&Message::Spawn(spawn_of(&["sh", "-c", &script], false)))
        })
        .collect();
    for (i, id) in ids.into_iter().enumerate() {
        assert!(matches!(agent.recv(id), Message::Spawned { .. }));
        let ran = agent.finish(id);
        assert_eq!(ran.stdout, format!("{i}\n").into_bytes());
        assert_eq!(ran.code, i as i32);
    }
}

#[test]
fn an_image_without_a_shell() {
    if !docker_available() {
        return;
    }
    let container = Container::start(NOSHELL, &[], &[]);
    let mut agent = container.agent();
    agent.send(CONTROL, &Message::Hello { version: VERSION });
    assert!(matches!(agent.recv(CONTROL), Message::Welcome { .. }));
    let ran = agent.run(&["/pause", "--version"]);
    assert_eq!(ran.code, 0);
    assert!(String::from_utf8_lossy(&ran.stdout).starts_with("pause "));
    assert_eq!(agent.run(&["sh", "-c", "true"]).code, 126);

    let id = agent.spawn(&["/pause"], false);
    agent.send(id, &Message::Kill);
    let ran = agent.finish(id);
    assert_eq!((ran.code, ran.signal), (137, 9));

    assert_eq!(
        agent.ask(Message::Mkdir {
            path: "/work/a/b".into(),
            creds: root()
        }),
        Message::Done
    );
    let data = noise(100_000, 3);
    assert_eq!(agent.write("/work/a/b/f", root(), &data), Message::Done);
    assert_eq!(agent.read("/work/a/b/f", root()).unwrap(), data);
    let names = agent.ask(Message::ReadDir {
        path: "/work/a/b".into(),
        creds: root(),
    });
    assert_eq!(names, Message::Names(vec!["f".into()]));
}
