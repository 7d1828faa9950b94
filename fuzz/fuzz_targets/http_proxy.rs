//! The egress proxy's request guard, heads and chunked bodies: see `src/fuzzing/http_proxy.rs`.
#![no_main]
libfuzzer_sys::fuzz_target!(
    |data: &[u8]| container_isolation_fuzz::fuzzing::check_http_proxy(data)
);
