//! Property tests of `LineDecoder`: whatever the bytes and however they are cut into
//! chunks, no line carries ESC, a C1 control or any other control but a tab, none is
//! blank, and the lines are those of the same bytes pushed at once.

use proptest::prelude::*;

use super::*;

/// Bytes that start, end or sit inside escape sequences, line ends, and multi-byte
/// characters (U+009B, the 8-bit CSI, among them), mixed with arbitrary bytes.
fn output_bytes() -> impl Strategy<Value = Vec<u8>> {
    let pieces: Vec<&'static [u8]> = vec![
        b"\x1b",
        b"[",
        b"]",
        b"P",
        b"(",
        b"\\",
        b"\x07",
        b"\r",
        b"\n",
        b"1;31m",
        b"m",
        b"a",
        b" ",
        b"\t",
        b"\xc2\x9b",
        b"\xc2\x85",
        "é".as_bytes(),
        "😀".as_bytes(),
        b"\xff",
    ];
    let piece = prop_oneof![
        3 => prop::sample::select(pieces).prop_map(<[u8]>::to_vec),
        1 => any::<u8>().prop_map(|b| vec![b]),
    ];
    proptest::collection::vec(piece, 0..64).prop_map(|p| p.concat())
}

fn decode(decoder: &mut LineDecoder, chunks: &[&[u8]]) -> Vec<String> {
    let mut out = Vec::new();
    for chunk in chunks {
        decoder.push(chunk, |l| out.push(l));
    }
    decoder.finish(|l| out.push(l));
    out
}

fn chunks<'a>(data: &'a [u8], cuts: &[prop::sample::Index]) -> Vec<&'a [u8]> {
    let mut at: Vec<usize> = cuts.iter().map(|c| c.index(data.len() + 1)).collect();
    at.sort_unstable();
    let mut out = Vec::new();
    let mut from = 0;
    for cut in at.into_iter().chain([data.len()]) {
        out.push(&data[from..cut]);
        from = cut;
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(1024) })]

    #[test]
    fn lines_are_clean_and_do_not_depend_on_chunking(
        data in output_bytes(),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..8),
        limit in prop_oneof![Just(MAX_PENDING), 4usize..24],
    ) {
        let whole = decode(&mut LineDecoder::with_limit(limit), &[&data]);
        for line in &whole {
            prop_assert!(!line.trim().is_empty(), "a blank line");
            let control = line
                .chars()
                .find(|c| *c == '\u{1b}' || ('\u{80}'..='\u{9f}').contains(c)
                    || (c.is_control() && *c != '\t'));
            prop_assert_eq!(control, None, "a control character in {:?}", line);
        }
        let pieces = chunks(&data, &cuts);
        let split = decode(&mut LineDecoder::with_limit(limit), &pieces);
        prop_assert_eq!(split, whole, "chunks {:?}", pieces);
    }
}

/// The case the property first found: a line cut at the limit only when its end came in a
/// later chunk, so that the tail of an escape sequence showed as a line of its own.
#[test]
fn a_line_past_the_limit_is_cut_though_its_end_is_in_the_same_chunk() {
    let data =
        b"\xf0\x9f\x98\x80\xc2\x9b\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b\xc2\x9b\x1b\x1b\x1b\x1b[\x1b[";
    let whole = decode(&mut LineDecoder::with_limit(5), &[data]);
    let split = decode(&mut LineDecoder::with_limit(5), &[&data[..11], &data[11..]]);
    assert_eq!(split, whole);
}
