//! The archive extractor, never writing outside its target: see `src/fuzzing/tar_extract.rs`.
#![no_main]
libfuzzer_sys::fuzz_target!(
    |data: &[u8]| container_isolation_fuzz::fuzzing::check_tar_extract(data)
);
