//! Ending commands: `Kill` takes a command's whole tree (daemons that left its session,
//! processes that ignore SIGTERM, a fork loop), `Signal` reaches every process of it, the
//! exit status says which signal ended it, and nothing outlives the agent's stdin.

use std::time::Duration;

use container_isolation_agent::protocol::{Message, CONTROL, MAX_FRAME, VERSION};

use super::support::*;

/// How long a killed tree may take to disappear from `/proc`.
const GONE: Duration = Duration::from_secs(5);

/// Waits until `count` processes matching `needle` run (the command got going).
fn wait_for(container: &Container, needle: &str, count: usize) {
    for _ in 0..100 {
        let found = container
            .processes()
            .iter()
            .filter(|p| p.contains(needle))
            .count();
        if found >= count {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!(
        "{count} × {needle:?} never ran: {:?}",
        container.processes()
    );
}

#[test]
fn kill_takes_daemons_that_left_the_session() {
    if !docker_available() {
        return;
    }
    let container = Container::debian();
    let mut agent = container.agent();
    let id = agent.spawn(
        &["sh", "-c", "setsid env -i sleep 1000 & sleep 1000"],
        false,
    );
    wait_for(&container, "sleep 1000", 2);
    agent.send(id, &Message::Kill);
    let ran = agent.finish(id);
    assert_eq!((ran.code, ran.signal), (128 + 9, 9));
    assert_eq!(container.left("sleep", GONE), Vec::<String>::new());
}

#[test]
fn a_daemon_left_behind_by_a_finished_command_is_still_killable() {
    if !docker_available() {
        return;
    }
    let container = Container::busybox();
    let mut agent = container.agent();
    // The daemon closes its output, so the command is over as soon as sh exits.
    let id = agent.spawn(
        &[
            "sh",
            "-c",
            "setsid sleep 1000 </dev/null >/dev/null 2>&1 & exit 5",
        ],
        false,
    );
    let ran = agent.finish(id);
    assert_eq!(ran.code, 5);
    wait_for(&container, "sleep 1000", 1);
    agent.send(id, &Message::Kill);
    // The daemon, and under load the command's `sh` too while its end is not reaped yet
    // (a fresh-clone run counted 2): what matters is that nothing is left.
    match agent.recv(id) {
        Message::Signalled { count } => assert!((1..=2).contains(&count), "{count}"),
        other => panic!("Kill answered with {other:?}"),
    }
    assert_eq!(container.left("sleep", GONE), Vec::<String>::new());
}

#[test]
fn sigterm_can_be_ignored_kill_cannot() {
    if !docker_available() {
        return;
    }
    let container = Container::busybox();
    let mut agent = container.agent();
    let id = agent.spawn(&["sh", "-c", "trap '' TERM; sleep 1000; echo after"], false);
    wait_for(&container, "sleep 1000", 1);
    agent.send(id, &Message::Signal { signo: 15 });
    match agent.recv(id) {
        Message::Signalled { count } => assert!(count >= 1, "signalled {count}"),
        other => panic!("Signal answered with {other:?}"),
    }
    std::thread::sleep(Duration::from_millis(300));
    let sleeping = container.processes();
    assert_eq!(
        sleeping
            .iter()
            .filter(|p| p.starts_with("sleep 1000"))
            .count(),
        1
    );
    assert!(agent.try_recv(id, Duration::ZERO).is_none());
    agent.send(id, &Message::Kill);
    let ran = agent.finish(id);
    assert_eq!((ran.code, ran.signal), (137, 9));
    assert!(ran.stdout.is_empty());
    assert_eq!(container.left("sleep", GONE), Vec::<String>::new());
}

#[test]
fn a_signal_that_ends_a_command_is_its_exit_status() {
    if !docker_available() {
        return;
    }
    let container = Container::busybox();
    let mut agent = container.agent();
    let id = agent.spawn(&["sleep", "1000"], false);
    wait_for(&container, "sleep 1000", 1);
    agent.send(id, &Message::Signal { signo: 15 });
    // The signal's own reply and the command's end travel separately: either may come
    // first, and both come.
    let (mut signalled, mut exited) = (None, None);
    while signalled.is_none() || exited.is_none() {
        match agent.recv(id) {
            Message::Signalled { count } => signalled = Some(count),
            Message::Exited { code, signal } => exited = Some((code, signal)),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(signalled, Some(1));
    assert_eq!(exited, Some((128 + 15, 15)));
    // Signalling a command that is gone reaches nobody.
    agent.send(id, &Message::Signal { signo: 15 });
    assert_eq!(agent.recv(id), Message::Signalled { count: 0 });
}

#[test]
fn kill_stops_a_fork_loop() {
    if !docker_available() {
        return;
    }
    // Paced, so that a slow test machine does not let the loop reach the pids limit (where
    // the shell itself gives up) before the kill.
    let container = Container::start(BUSYBOX, &["--pids-limit", "20000"], KEEP_ALIVE);
    let mut agent = container.agent();
    let id = agent.spawn(
        &["sh", "-c", "while :; do sleep 1000 & usleep 1000; done"],
        false,
    );
    std::thread::sleep(Duration::from_millis(200));
    agent.send(id, &Message::Kill);
    let ran = agent.finish(id);
    assert_eq!((ran.code, ran.signal), (137, 9));
    assert_eq!(container.left("sleep", GONE), Vec::<String>::new());
    assert_eq!(container.left("while", GONE), Vec::<String>::new());
}

#[test]
fn kill_right_after_spawn_is_not_lost() {
    if !docker_available() {
        return;
    }
    let container = Container::busybox();
    let mut agent = container.agent();
    for _ in 0..10 {
        let id = agent.request(&Message::Spawn(spawn_of(&["sleep", "1000"], false)));
        agent.send(id, &Message::Kill);
        assert!(matches!(agent.recv(id), Message::Spawned { .. }));
        let ran = agent.finish(id);
        assert_eq!(ran.signal, 9, "{ran:?}");
    }
    assert_eq!(container.left("sleep", GONE), Vec::<String>::new());
}

#[test]
fn closing_the_agents_stdin_kills_every_tree() {
    if !docker_available() {
        return;
    }
    let container = Container::debian();
    let mut agent = container.agent();
    agent.spawn(&["sh", "-c", "setsid sleep 1000 & sleep 1000"], false);
    agent.spawn(&["sh", "-c", "trap '' TERM HUP; sleep 1000"], false);
    wait_for(&container, "sleep 1000", 3);
    agent.close();
    assert_eq!(
        agent.wait_exit(GONE),
        Some(0),
        "the agent ends with its stdin"
    );
    assert_eq!(container.left("sleep", GONE), Vec::<String>::new());
    assert_eq!(
        container.left("container-isolation-agent", GONE),
        Vec::<String>::new()
    );
}

#[test]
fn closing_stdin_right_after_spawn_still_kills_it() {
    if !docker_available() {
        return;
    }
    let container = Container::busybox();
    for _ in 0..5 {
        let mut agent = container.agent();
        for _ in 0..3 {
            agent.request(&Message::Spawn(spawn_of(&["sleep", "1000"], false)));
        }
        agent.close();
        assert_eq!(agent.wait_exit(GONE), Some(0));
    }
    assert_eq!(container.left("sleep", GONE), Vec::<String>::new());
}

#[test]
fn a_killed_agent_takes_every_tree_with_it() {
    if !docker_available() {
        return;
    }
    let container = Container::debian();
    let mut agent = container.agent();
    agent.send(CONTROL, &Message::Hello { version: VERSION });
    let Message::Welcome { pid, .. } = agent.recv(CONTROL) else {
        panic!("no Welcome");
    };
    agent.spawn(&["sh", "-c", "setsid sleep 1000 & sleep 1000"], false);
    // A finished command's daemon, too.
    let id = agent.spawn(&["sh", "-c", "setsid sleep 1000 >/dev/null 2>&1 &"], false);
    assert_eq!(agent.finish(id).code, 0);
    wait_for(&container, "sleep 1000", 3);
    container.exec(&["kill", "-9", &pid.to_string()]);
    assert_eq!(agent.wait_exit(GONE), Some(137));
    assert_eq!(container.left("sleep", GONE), Vec::<String>::new());
    assert_eq!(
        container.left("container-isolation-agent", GONE),
        Vec::<String>::new()
    );
}

#[test]
fn a_malformed_frame_ends_the_agent_and_its_commands() {
    if !docker_available() {
        return;
    }
    let container = Container::busybox();
    let mut agent = container.agent();
    agent.spawn(&["sleep", "1000"], false);
    wait_for(&container, "sleep 1000", 1);
    agent.send_raw(&(MAX_FRAME as u32 + 1).to_le_bytes());
    assert_eq!(agent.wait_exit(GONE), Some(3));
    assert_eq!(container.left("sleep", GONE), Vec::<String>::new());
}
