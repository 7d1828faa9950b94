//! The output line decoder (`output::LineDecoder`) that turns a command's bytes into the
//! lines a host shows: no line carries ESC, a C1 control (8-bit CSI included) or any
//! other control character but a tab, none is blank, and the lines are the same however
//! the bytes arrive.

use super::rng::{pieces, Rng};
use crate::output::LineDecoder;

fn lines(pieces: &[&[u8]]) -> Vec<String> {
    let mut decoder = LineDecoder::new();
    let mut out = Vec::new();
    for piece in pieces {
        decoder.push(piece, |l| out.push(l));
    }
    decoder.finish(|l| out.push(l));
    out
}

pub fn check_line_decoder(data: &[u8]) {
    let whole = lines(&[data]);
    for line in &whole {
        assert!(!line.trim().is_empty(), "a blank line");
        let control = line.chars().find(|c| c.is_control() && *c != '\t');
        assert_eq!(control, None, "a control character in {line:?}");
    }
    let mut rng = Rng::from_bytes(data);
    for single in [true, false, false] {
        let cuts = rng.cuts(data.len(), single);
        assert_eq!(lines(&pieces(data, &cuts)), whole, "cut at {cuts:?}");
    }
}
