//! The invariants of the host's parsers of hostile bytes, one check per fuzz target: each
//! `check_*` takes any bytes and panics when an invariant breaks. `cargo test` replays
//! every committed corpus (`fuzz/corpus/<target>/`) through them, then a short run of
//! seeded mutations; the libFuzzer targets (`fuzz/`, `npm run fuzz`) compile these files
//! with the parsers they check. `image_refs` is `cargo test`'s alone (its parsers stand on
//! most of the crate).

mod agent_frames;
mod client_hello;
mod egress_names;
mod git_objects;
mod http_proxy;
#[cfg(test)]
mod image_refs;
mod line_decoder;
#[cfg(test)]
mod mutate;
mod rng;
mod special_addresses;
mod tar_extract;

#[cfg(test)]
mod git_cli_replay_tests;
#[cfg(test)]
mod replay_tests;

pub use agent_frames::check_agent_frames;
pub use client_hello::check_client_hello;
pub use egress_names::check_egress_names;
pub use git_objects::check_git_objects;
pub use http_proxy::check_http_proxy;
#[cfg(test)]
pub use image_refs::check_image_refs;
pub use line_decoder::check_line_decoder;
pub use rng::Rng;
pub use special_addresses::check_special_addresses;
pub use tar_extract::check_tar_extract;

/// A target's check: panics when its input breaks an invariant.
pub type Check = fn(&[u8]);

/// Every target by the name of its fuzz target and corpus folder.
pub const TARGETS: &[(&str, Check)] = &[
    ("agent_frames", check_agent_frames),
    ("http_proxy", check_http_proxy),
    ("client_hello", check_client_hello),
    ("egress_names", check_egress_names),
    ("special_addresses", check_special_addresses),
    ("git_objects", check_git_objects),
    ("tar_extract", check_tar_extract),
    #[cfg(test)]
    ("image_refs", check_image_refs),
    ("line_decoder", check_line_decoder),
];
