//! Round trips of every message through a byte stream, and malformed input as errors.

use super::*;

fn all() -> Vec<Message> {
    let creds = Creds {
        uid: 1000,
        gid: 1000,
        groups: vec![27, 100],
    };
    vec![
        Message::Hello { version: VERSION },
        Message::Spawn(Spawn {
            argv: vec!["sh".into(), "-c".into(), "echo é".into()],
            cwd: Some("/workspace".into()),
            replace_env: true,
            env: vec![("A".into(), "b=c".into())],
            creds: creds.clone(),
            home: Some("/home/agent".into()),
            stdin: true,
        }),
        Message::Stdin(vec![0, 255, 10]),
        Message::StdinEnd,
        Message::Signal { signo: 15 },
        Message::Kill,
        Message::StatPath {
            path: "/a".into(),
            follow: true,
            creds: creds.clone(),
        },
        Message::Read {
            path: "/r".into(),
            creds: creds.clone(),
        },
        Message::Write {
            path: "/w".into(),
            creds: creds.clone(),
        },
        Message::Abort,
        Message::Mkdir {
            path: "/m".into(),
            creds: creds.clone(),
        },
        Message::ReadDir {
            path: "/d".into(),
            creds,
        },
        Message::Welcome { version: 1, pid: 7 },
        Message::Done,
        Message::Failed {
            errno: 2,
            message: "no such file".into(),
        },
        Message::Spawned { pid: 42 },
        Message::Output {
            stderr: true,
            data: b"x\n".to_vec(),
        },
        Message::Exited { code: 0, signal: 9 },
        Message::Signalled { count: 3 },
        Message::Stat(Stat {
            kind: FileKind::Dir,
            size: 4096,
            mtime_sec: -1,
            mtime_nsec: 999_999_999,
            mode: 0o755,
        }),
        Message::Names(vec![".hidden".into(), "b".into()]),
        Message::Data(vec![1; 1000]),
        Message::End,
        Message::Dial { port: 8080 },
        Message::Accepted { listener: 1 },
        Message::Credit { bytes: 65536 },
        Message::Ping,
        Message::Pong,
        Message::Line {
            path: "/.container-isolation-line/host-7.sock".into(),
            token: vec![1, 2, 3],
        },
        Message::Join { token: vec![0; 32] },
        Message::Terminal {
            spawn: Spawn {
                argv: vec!["bash".into()],
                ..Default::default()
            },
            cols: 80,
            rows: 24,
            acks: 9,
        },
        Message::Resize {
            cols: 65535,
            rows: 1,
        },
    ]
}

#[test]
fn every_message_round_trips_through_a_byte_stream_cut_anywhere() {
    let messages = all();
    let bytes: Vec<u8> = messages
        .iter()
        .enumerate()
        .flat_map(|(i, m)| encode(i as u32, m))
        .collect();
    for piece in [1, 3, 7, 64, bytes.len()] {
        let mut frames = FrameBuffer::default();
        let mut got = Vec::new();
        for chunk in bytes.chunks(piece) {
            frames.push(chunk);
            while let Some(frame) = frames.next_frame() {
                got.push(frame.unwrap());
            }
        }
        let expected: Vec<_> = messages
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, m)| (i as u32, m))
            .collect();
        assert_eq!(got, expected, "pieces of {piece}");
    }
}

#[test]
fn malformed_frames_are_errors_not_panics() {
    let mut frames = FrameBuffer::default();
    frames.push(&((MAX_FRAME + 1) as u32).to_le_bytes());
    assert!(frames.next_frame().unwrap().is_err());
    for body in [
        vec![0, 0, 0, 0, 200],
        vec![0, 0, 0, 0, 3, 255, 255, 255, 255],
        vec![0, 0, 0, 0, 40, 255, 255, 255, 255],
        vec![0, 0, 0, 0, 5, 1, 0, 0, 0, 9],
        vec![0, 0, 0, 0, 36, 2, 0, 0, 0, 0],
        vec![0, 0],
    ] {
        assert!(decode(&body).is_err(), "{body:?}");
    }
}

#[test]
fn a_data_header_and_its_payload_are_the_encoded_frame() {
    let payload = b"\0raw bytes\xff".to_vec();
    let mut frame = data_header(7, payload.len()).to_vec();
    frame.extend_from_slice(&payload);
    assert_eq!(frame, encode(7, &Message::Data(payload)));
}

#[test]
fn an_output_header_and_its_data_are_the_encoded_frame() {
    for stderr in [false, true] {
        let data = b"line\n\xff".to_vec();
        let mut frame = output_header(9, stderr, data.len()).to_vec();
        frame.extend_from_slice(&data);
        assert_eq!(frame, encode(9, &Message::Output { stderr, data }));
    }
}
