//! The glob semantics the MCP tools document, the regular expressions refused and why, the
//! bounds on patterns, and hostile patterns that backtracking engines never finish.

use std::time::{Duration, Instant};

use super::{LineMatch, LinePattern, PathGlob, MAX_GLOB_CHARS, MAX_PATTERN_CHARS};
use crate::error::ErrorCode;

fn far() -> Instant {
    Instant::now() + Duration::from_secs(3600)
}

#[test]
fn globs_match_as_the_tools_document() {
    let table: &[(&str, &str, bool)] = &[
        // No `/`: a file name at any depth.
        ("*.md", "README.md", true),
        ("*.md", "docs/deep/notes.md", true),
        ("*.md", "README.mdx", false),
        ("notes.md", "a/notes.md", true),
        ("notes.md", "a/notes.md/x", false),
        // `*` and `?` stay within a segment.
        ("src/*.js", "src/app.js", true),
        ("src/*.js", "src/new/feature.js", false),
        ("src/?.js", "src/a.js", true),
        ("src/?.js", "src/ab.js", false),
        ("src/?", "src//", false),
        // `**` across segments, at the start, middle and end.
        ("**/*.js", "app.js", true),
        ("**/*.js", "src/new/feature.js", true),
        ("src/**/x.ts", "src/x.ts", true),
        ("src/**/x.ts", "src/a/b/x.ts", true),
        ("src/**", "src/a/b/c", true),
        ("src/**", "lib/a", false),
        ("**", "any/thing/at/all", true),
        // Classes, negated classes, ranges.
        ("[abc].txt", "b.txt", true),
        ("[abc].txt", "d.txt", false),
        ("[!abc].txt", "d.txt", true),
        ("[!abc].txt", "a.txt", false),
        ("file[0-9].log", "file7.log", true),
        ("a/b[!c]d", "a/b/d", false),
        // Alternatives, nested and empty ones.
        ("*.{js,ts}", "lib/a.ts", true),
        ("*.{js,ts}", "lib/a.rs", false),
        ("{src,lib}/*.js", "lib/a.js", true),
        ("{src,lib}/*.js", "bin/a.js", false),
        ("a{,.bak}", "a.bak", true),
        ("a{,.bak}", "a", true),
        ("{a,{b,c}}.x", "c.x", true),
        // A leading ./ is dropped; a pattern with / is anchored at the folder searched.
        ("./src/*.js", "src/app.js", true),
        ("src/*.js", "lib/src/app.js", false),
        // Characters special to regular expressions are themselves.
        ("a+b(1).txt", "a+b(1).txt", true),
        ("a.b", "axb", false),
        ("^$|", "^$|", true),
        // An unclosed `[` is itself; `\` escapes.
        ("[x", "[x", true),
        ("\\*.md", "*.md", true),
        ("\\*.md", "a.md", false),
    ];
    for (glob, path, expected) in table {
        let compiled = PathGlob::new(glob).unwrap_or_else(|e| panic!("{glob}: {}", e.message));
        assert_eq!(compiled.is_match(path), *expected, "{glob} against {path}");
    }
}

#[test]
fn globs_over_the_bound_or_malformed_are_invalid_arguments() {
    let long = "a".repeat(MAX_GLOB_CHARS + 1);
    let err = PathGlob::new(&long).err().expect("refused");
    assert_eq!(err.code, ErrorCode::InvalidArgument);
    assert!(
        err.message.contains("at most 1000 characters"),
        "{}",
        err.message
    );
    assert!(PathGlob::new(&"a".repeat(MAX_GLOB_CHARS)).is_ok());
    for bad in ["{a,b", "[z-a]", "a\\"] {
        let err = PathGlob::new(bad)
            .err()
            .unwrap_or_else(|| panic!("{bad} accepted"));
        assert_eq!(err.code, ErrorCode::InvalidArgument);
        assert!(
            err.message
                .starts_with(&format!("glob '{bad}' is malformed: ")),
            "{}",
            err.message
        );
    }
}

#[test]
fn a_glob_that_backtracks_without_end_is_matched_in_linear_time() {
    let glob = PathGlob::new("*a*a*a*a*a*a*a*a*a*a*a*b").unwrap();
    let paths: Vec<String> = (0..1000)
        .map(|i| format!("slow/{}{i}.txt", "a".repeat(200)))
        .collect();
    let started = Instant::now();
    let scan = glob.scan(&paths, far());
    assert_eq!((scan.indices.len(), scan.complete), (0, true));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let matching = format!("{}b", "a".repeat(40));
    assert_eq!(glob.scan(&[matching], far()).indices, vec![0]);
}

#[test]
fn a_path_scan_stops_at_its_deadline() {
    let glob = PathGlob::new("*.js").unwrap();
    let paths = vec!["a.js", "b.js"];
    let scan = glob.scan(&paths, Instant::now());
    assert_eq!((scan.indices.len(), scan.complete), (0, false));
    assert_eq!(glob.scan(&paths, far()).indices, vec![0, 1]);
}

fn lines(pattern: &str, ignore_case: bool, content: &str) -> Vec<(u32, String)> {
    let scan = LinePattern::new(pattern, ignore_case)
        .unwrap_or_else(|e| panic!("{pattern}: {}", e.message))
        .scan(content.as_bytes(), 100, far())
        .unwrap();
    assert!(scan.complete);
    scan.matches
        .into_iter()
        .map(|LineMatch { line, text }| (line, text))
        .collect()
}

#[test]
fn lines_are_matched_one_by_one() {
    let notes = "# notes\nTODO: one\nTODO: two\n";
    assert_eq!(
        lines(r"TODO: \w+", false, notes),
        vec![(2, "TODO: one".into()), (3, "TODO: two".into())]
    );
    assert_eq!(
        lines(r"^TODO: t", false, notes),
        vec![(3, "TODO: two".into())]
    );
    assert_eq!(lines(r"one$", false, notes), vec![(2, "TODO: one".into())]);
    assert_eq!(lines("todo", false, notes), vec![]);
    assert_eq!(lines("todo", true, notes).len(), 2);
    // The piece after the final newline is a line (as JavaScript's split has it).
    assert_eq!(
        lines("^$", false, "a\n\nb\n"),
        vec![(2, String::new()), (4, String::new())]
    );
    // \b is an ASCII word boundary, as in JavaScript; \w stays Unicode.
    assert_eq!(
        lines(r"\bcat\b", false, "a cat\ncats\nécat\n"),
        vec![(1, "a cat".into()), (3, "écat".into())]
    );
    assert_eq!(
        lines(r"^\w+$", false, "héllo\nhi there\n"),
        vec![(1, "héllo".into())]
    );
    // Bytes that are not UTF-8 are no obstacle; the line is shown lossily.
    let scan = LinePattern::new("needle", false)
        .unwrap()
        .scan(b"\xff\xfe needle\n", 10, far())
        .unwrap();
    assert_eq!(
        scan.matches,
        vec![LineMatch {
            line: 1,
            text: "\u{fffd}\u{fffd} needle".into()
        }]
    );
}

#[test]
fn matches_stop_at_max_and_long_lines_are_cut() {
    let content = format!("x{}\nx\nx\n", "é".repeat(600));
    let scan = LinePattern::new("x", false)
        .unwrap()
        .scan(content.as_bytes(), 2, far())
        .unwrap();
    assert_eq!(scan.matches.len(), 2);
    assert!(scan.complete);
    assert_eq!(scan.matches[0].text, format!("x{}…", "é".repeat(499)));
    assert_eq!(scan.matches[1].text, "x");
}

fn refusal(pattern: &str) -> String {
    let err = LinePattern::new(pattern, false)
        .err()
        .unwrap_or_else(|| panic!("{pattern} accepted"));
    assert_eq!(err.code, ErrorCode::InvalidArgument, "{pattern}");
    err.message
}

#[test]
fn patterns_this_engine_cannot_run_are_refused_by_name() {
    for look in ["a(?=b)", "a(?!b)", "(?<=a)b", "(?<!a)b"] {
        assert!(
            refusal(look).starts_with("pattern uses look-around"),
            "{look}: {}",
            refusal(look)
        );
    }
    assert!(refusal(r"(a)\1").starts_with("pattern uses a backreference"));
    assert_eq!(
        refusal("("),
        "pattern is not a regular expression in Rust regex syntax: unclosed group (at character 1)"
    );
    assert!(
        refusal(r"\p{NoSuchClass}").contains("Unicode property not found"),
        "{}",
        refusal(r"\p{NoSuchClass}")
    );
}

#[test]
fn patterns_over_the_bounds_are_refused() {
    assert_eq!(
        refusal(&"a".repeat(MAX_PATTERN_CHARS + 1)),
        "a pattern is at most 1000 characters"
    );
    assert!(LinePattern::new(&"a".repeat(MAX_PATTERN_CHARS), false).is_ok());
    // Counted repetitions multiply an automaton's size: refused before any memory is used.
    for big in [r"\w{300}", "(?:a{1000}){1000}", r"(?:[ab]{1000}){500}"] {
        let started = Instant::now();
        assert!(
            refusal(big).starts_with("pattern compiles to an automaton larger than 4 MiB"),
            "{big}: {}",
            refusal(big)
        );
        // Against a hang, not a speed target: a debug build on a loaded CI machine took 7.5 s.
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{big}: {:?}",
            started.elapsed()
        );
    }
    assert!(LinePattern::new(r"\w{200}", false).is_ok());
    // Nesting is bounded too.
    let deep = format!("{}a{}", "(".repeat(150), ")".repeat(150));
    assert!(refusal(&deep).contains("nest"), "{}", refusal(&deep));
}

#[test]
fn a_pattern_that_backtracks_without_end_is_matched_in_linear_time() {
    let pattern = LinePattern::new("(a+)+$b", false).unwrap();
    let content = format!("{}\n", "a".repeat(100_000)).repeat(10);
    let started = Instant::now();
    let scan = pattern.scan(content.as_bytes(), 100, far()).unwrap();
    assert_eq!((scan.matches.len(), scan.complete), (0, true));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_scan_stops_at_its_deadline_within_one_long_line() {
    // Small to write, large as an automaton: a DFA of 2^20000 states, 20,000 NFA states per
    // byte; regex's is_match takes some 24 s on 100 KB of it (release build).
    let pattern = LinePattern::new("[ab]*a[ab]{20000}c", false).unwrap();
    // a and b at random (xorshift): no period for the automaton's states to repeat with.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let line: Vec<u8> = (0..1_000_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            if state & 1 == 0 {
                b'a'
            } else {
                b'b'
            }
        })
        .collect();
    let started = Instant::now();
    let scan = pattern
        .scan(&line, 100, Instant::now() + Duration::from_millis(300))
        .unwrap();
    assert_eq!((scan.matches.len(), scan.complete), (0, false));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}
