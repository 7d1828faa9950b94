//! Seeded mutations of corpus entries for `cargo test`'s bounded run: byte flips, interesting
//! values, insertions, deletions, duplicated ranges and splices of two entries (a little of
//! what libFuzzer does, without its coverage feedback).

use super::rng::Rng;

const INTERESTING: &[u8] = &[
    0, 1, 2, 0x7f, 0x80, 0xff, b'\r', b'\n', b':', b'.', b'/', b'[',
];

/// A mutation of `corpus[i]` (for a random `i`), a few steps away from it.
pub fn mutate(rng: &mut Rng, corpus: &[Vec<u8>]) -> Vec<u8> {
    let mut data = match corpus.len() {
        0 => Vec::new(),
        n => corpus[rng.below(n)].clone(),
    };
    for _ in 0..rng.below(4) + 1 {
        step(rng, &mut data, corpus);
    }
    data
}

fn step(rng: &mut Rng, data: &mut Vec<u8>, corpus: &[Vec<u8>]) {
    let len = data.len();
    match rng.below(7) {
        0 if len > 0 => data[rng.below(len)] ^= 1 << rng.below(8),
        1 if len > 0 => data[rng.below(len)] = INTERESTING[rng.below(INTERESTING.len())],
        2 => {
            let at = rng.below(len + 1);
            let byte = rng.next_u64() as u8;
            data.insert(at, byte);
        }
        3 if len > 0 => {
            let at = rng.below(len);
            let end = (at + rng.below(16) + 1).min(len);
            data.drain(at..end);
        }
        4 if len > 0 => {
            let at = rng.below(len);
            let end = (at + rng.below(64) + 1).min(len);
            let copy = data[at..end].to_vec();
            let to = rng.below(len + 1);
            data.splice(to..to, copy);
        }
        5 if !corpus.is_empty() => {
            let other = &corpus[rng.below(corpus.len())];
            let (cut, from) = (rng.below(len + 1), rng.below(other.len() + 1));
            data.truncate(cut);
            data.extend_from_slice(&other[from..]);
        }
        _ if len >= 4 => {
            // A little-endian or big-endian length field somewhere, set to something odd.
            let at = rng.below(len - 3);
            let value = [0u32, 1, 0xff, 0xffff, 0x10_0000, u32::MAX][rng.below(6)];
            let bytes = match rng.below(2) {
                0 => value.to_le_bytes(),
                _ => value.to_be_bytes(),
            };
            let width = [1, 2, 4][rng.below(3)];
            data[at..at + width].copy_from_slice(&bytes[4 - width..]);
        }
        _ => data.push(rng.next_u64() as u8),
    }
}
