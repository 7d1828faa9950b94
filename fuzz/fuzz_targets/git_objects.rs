//! git_fsck's tree and commit checks against libgit2: see `src/fuzzing/git_objects.rs`.
#![no_main]
libfuzzer_sys::fuzz_target!(
    |data: &[u8]| container_isolation_fuzz::fuzzing::check_git_objects(data)
);
