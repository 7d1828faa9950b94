//! The policy's refusal by name against spellings of a denied name: see `src/fuzzing/egress_names.rs`.
#![no_main]
libfuzzer_sys::fuzz_target!(
    |data: &[u8]| container_isolation_fuzz::fuzzing::check_egress_names(data)
);
