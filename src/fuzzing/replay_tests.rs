//! Every fuzz target in `cargo test`: its committed corpus replayed through its check, then
//! seeded mutations of the corpus for about two seconds (the same inputs on every run; a
//! failure prints the input that broke the check). `FUZZ_REPLAY_SECONDS=N` runs each
//! target's mutations for N seconds instead (no count bound), to look further by hand.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::mutate::mutate;
use super::{Rng, TARGETS};

const RANDOM_RUN: Duration = Duration::from_secs(2);
const MAX_MUTATIONS: usize = 200_000;

/// How long, and for how many inputs at most, each target's mutations run.
fn mutation_budget() -> (Duration, usize) {
    match std::env::var("FUZZ_REPLAY_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        Some(seconds) => (Duration::from_secs(seconds), usize::MAX),
        None => (RANDOM_RUN, MAX_MUTATIONS),
    }
}

/// The committed corpus of `target`, in name order.
pub fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    entries.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

fn run(target: &str, check: fn(&[u8]), data: &[u8], what: &str) {
    if catch_unwind(AssertUnwindSafe(|| check(data))).is_err() {
        panic!(
            "{target}: {what} breaks the check: {:?}",
            data.escape_ascii().to_string()
        );
    }
}

#[test]
fn every_target_holds_on_its_corpus_and_on_seeded_mutations_of_it() {
    for (target, check) in TARGETS {
        let corpus = corpus(target);
        assert!(!corpus.is_empty(), "{target} has no corpus");
        for (i, entry) in corpus.iter().enumerate() {
            run(target, *check, entry, &format!("corpus entry {i}"));
        }
        let mut rng = Rng::new(0x5eed);
        let (run_for, max_mutations) = mutation_budget();
        let start = Instant::now();
        let mut n = 0;
        while n < max_mutations && start.elapsed() < run_for {
            let data = mutate(&mut rng, &corpus);
            run(target, *check, &data, &format!("mutation {n}"));
            n += 1;
        }
        eprintln!("{target}: {} corpus entries, {n} mutations", corpus.len());
    }
    super::tar_extract::remove_workspace();
}
