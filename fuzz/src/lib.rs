//! The parsers under fuzz and their checks, compiled from the main crate's own files
//! (`#[path]`, the same module tree), so that the libFuzzer build needs only what those
//! parsers use: instrumenting the whole addon (kube, bollard, napi, ...) takes over an hour
//! on two cores. `fuzzing` is `src/fuzzing/`, the checks `cargo test` runs too.
#![allow(dead_code, unused_imports)]

pub mod egress;
#[path = "../../src/error.rs"]
pub mod error;
pub mod fileio;
#[path = "../../src/fuzzing/mod.rs"]
pub mod fuzzing;
#[path = "../../src/git_fsck/mod.rs"]
pub mod git_fsck;
#[path = "../../src/output/mod.rs"]
pub mod output;
#[path = "../../src/refusal.rs"]
pub mod refusal;
#[path = "../../src/tar_extract/mod.rs"]
pub mod tar_extract;
