//! The host's reader of agent frames: see `src/fuzzing/agent_frames.rs`.
#![no_main]
libfuzzer_sys::fuzz_target!(
    |data: &[u8]| container_isolation_fuzz::fuzzing::check_agent_frames(data)
);
