//! A stand-in for the session agent that misbehaves on purpose, for the hostile-container
//! tests: what the host meets when something in the container replaces or takes over its
//! agent. One static program; which misbehaviour it shows is read from the last line of
//! its own executable (`#misbehave=NAME`), which the test set-up appends to each copy, so
//! the copies differ by content (and the host's per-digest private copies keep apart).
//!
//! NAME is one of: `huge-frame`, `endless-output`, `endless-read`, `unsolicited`,
//! `field-overrun`, `silent`, `dies-on-request`, `listing-count`.

use std::io::{Read, Write};

use container_isolation_agent::protocol::{encode, FrameBuffer, Message, CONTROL, OLDEST_VERSION};

fn misbehaviour() -> String {
    let exe = std::fs::read("/proc/self/exe").unwrap_or_default();
    let tail = &exe[exe.len().saturating_sub(64)..];
    let text = String::from_utf8_lossy(tail);
    text.rsplit("#misbehave=")
        .next()
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn send(out: &mut impl Write, id: u32, message: &Message) {
    if out
        .write_all(&encode(id, message))
        .and_then(|_| out.flush())
        .is_err()
    {
        std::process::exit(0);
    }
}

/// Writes `message` under `id` without end (until the host goes away).
fn flood(out: &mut impl Write, id: impl Fn(u64) -> u32, message: &Message) -> ! {
    for n in 0.. {
        send(out, id(n), message);
    }
    unreachable!()
}

fn main() {
    let behaviour = misbehaviour();
    let mut stdin = std::io::stdin().lock();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut frames = FrameBuffer::default();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = match stdin.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        frames.push(&buf[..n]);
        while let Some(Ok((id, message))) = frames.next_frame() {
            if behaviour == "silent" {
                continue;
            }
            if let Message::Hello { .. } = message {
                // As an agent from before the direct line: the host keeps to the exec stream,
                // where these misbehaviours are aimed (the line's own are in line.spec.ts).
                let welcome = Message::Welcome {
                    version: OLDEST_VERSION,
                    pid: std::process::id(),
                };
                send(&mut out, CONTROL, &welcome);
                continue;
            }
            answer(&behaviour, id, &message, &mut out);
        }
    }
}

fn answer(behaviour: &str, id: u32, message: &Message, out: &mut impl Write) {
    let chunk = vec![b'x'; 256 * 1024];
    match behaviour {
        "huge-frame" => {
            let _ = out.write_all(&u32::MAX.to_le_bytes());
            flood(out, |_| id, &Message::Data(chunk))
        }
        "endless-output" => {
            if let Message::Spawn(_) = message {
                send(out, id, &Message::Spawned { pid: 1 });
            }
            let output = Message::Output {
                stderr: false,
                data: chunk,
            };
            flood(out, |_| id, &output)
        }
        "endless-read" => flood(out, |_| id, &Message::Data(chunk)),
        "unsolicited" => flood(out, |n| id.wrapping_add(1000 + n as u32), &Message::Done),
        "field-overrun" => {
            // An `Output` whose data length says 1000 bytes, in a frame that holds 3.
            let mut frame = Vec::new();
            frame.extend_from_slice(&(4 + 1 + 1 + 4 + 3u32).to_le_bytes());
            frame.extend_from_slice(&id.to_le_bytes());
            frame.push(36);
            frame.push(0);
            frame.extend_from_slice(&1000u32.to_le_bytes());
            frame.extend_from_slice(b"abc");
            let _ = out.write_all(&frame).and_then(|_| out.flush());
        }
        "dies-on-request" => std::process::exit(1),
        "listing-count" => {
            // `Names` with a count of 2^32-1 in a frame of a few bytes.
            let mut frame = Vec::new();
            frame.extend_from_slice(&(4 + 1 + 4u32).to_le_bytes());
            frame.extend_from_slice(&id.to_le_bytes());
            frame.push(40);
            frame.extend_from_slice(&u32::MAX.to_le_bytes());
            let _ = out.write_all(&frame).and_then(|_| out.flush());
        }
        other => {
            eprintln!("standin agent: unknown misbehaviour '{other}'");
            std::process::exit(2);
        }
    }
}
