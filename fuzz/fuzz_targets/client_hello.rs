//! The tunnel's ClientHello server-name reader against rustls: see `src/fuzzing/client_hello.rs`.
#![no_main]
libfuzzer_sys::fuzz_target!(
    |data: &[u8]| container_isolation_fuzz::fuzzing::check_client_hello(data)
);
