//! Terminals: the program sees a terminal of the asked size and every resize, input is
//! acknowledged piece by piece, Ctrl-C reaches the foreground job only, the exit code comes
//! back, and what the program left running is gone once it has exited.

use std::time::{Duration, Instant};

use container_isolation_agent::protocol::Message;

use super::client::Agent;
use super::support::*;

/// Opens a terminal of 80 × 24 running `argv`; its request id and its acks' id.
fn open(agent: &mut Agent, argv: &[&str]) -> (u32, u32) {
    let acks = agent.request(&Message::Ping);
    assert_eq!(agent.recv(acks), Message::Pong);
    let id = agent.request(&Message::Terminal {
        spawn: spawn_of(argv, true),
        cols: 80,
        rows: 24,
        acks,
    });
    match agent.recv(id) {
        Message::Spawned { .. } => (id, acks),
        other => panic!("terminal {argv:?}: {other:?}"),
    }
}

/// Output of terminal `id` until it holds `needle`; everything read so far.
fn until(agent: &mut Agent, id: u32, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains(needle) {
        assert!(
            Instant::now() < deadline,
            "no {needle:?} in {:?}",
            String::from_utf8_lossy(&seen)
        );
        match agent.try_recv(id, Duration::from_millis(200)) {
            Some(Message::Output { data, .. }) => seen.extend(data),
            Some(other) => panic!("waiting for {needle:?}: {other:?}"),
            None => {}
        }
    }
    String::from_utf8_lossy(&seen).into_owned()
}

fn type_in(agent: &mut Agent, id: u32, acks: u32, text: &str) {
    agent.send(id, &Message::Stdin(text.as_bytes().to_vec()));
    assert_eq!(
        agent.recv(acks),
        Message::Credit {
            bytes: text.len() as u32
        }
    );
}

#[test]
fn a_shell_sees_its_size_and_resizes_and_its_exit_code_comes_back() {
    if !docker_available() {
        return;
    }
    let container = Container::debian();
    let mut agent = container.agent();
    let (id, acks) = open(&mut agent, &["sh"]);
    type_in(&mut agent, id, acks, "stty size; tty\n");
    let seen = until(&mut agent, id, "/dev/pts/");
    assert!(seen.contains("24 80"), "{seen:?}");
    agent.send(
        id,
        &Message::Resize {
            cols: 132,
            rows: 50,
        },
    );
    type_in(&mut agent, id, acks, "stty size\n");
    until(&mut agent, id, "50 132");
    type_in(&mut agent, id, acks, "sleep 1000 & exit 7\n");
    let ran = agent.finish(id);
    assert_eq!((ran.code, ran.signal), (7, 0));
    assert_eq!(
        container.left("sleep 1000", Duration::from_secs(5)),
        Vec::<String>::new()
    );
}

#[test]
fn ctrl_c_stops_the_foreground_job_and_the_shell_stays() {
    if !docker_available() {
        return;
    }
    let container = Container::debian();
    let mut agent = container.agent();
    let (id, acks) = open(&mut agent, &["sh"]);
    type_in(&mut agent, id, acks, "sleep 1000\n");
    let deadline = Instant::now() + Duration::from_secs(10);
    while container.left("sleep 1000", Duration::ZERO).is_empty() {
        assert!(Instant::now() < deadline, "the sleep never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    type_in(&mut agent, id, acks, "\x03");
    type_in(&mut agent, id, acks, "echo after-$?\n");
    until(&mut agent, id, "after-130");
    type_in(&mut agent, id, acks, "exit\n");
    assert_eq!(agent.finish(id).code, 0);
}
