//! The output line decoder, no control characters out: see `src/fuzzing/line_decoder.rs`.
#![no_main]
libfuzzer_sys::fuzz_target!(
    |data: &[u8]| container_isolation_fuzz::fuzzing::check_line_decoder(data)
);
