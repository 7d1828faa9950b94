//! Special IPv4 addresses in every IPv6 form that carries one: see `src/fuzzing/special_addresses.rs`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    container_isolation_fuzz::fuzzing::check_special_addresses(data)
});
