//! A tar archive from an untrusted source (a container's files, through the engine's
//! archive endpoint) written into a fresh directory on the host: only regular files,
//! directories and symlinks (stored as links, never followed), nothing outside the target,
//! within bounds.

mod entry_path;
mod extract;
mod parent_dirs;
#[cfg(test)]
mod tests;

pub use extract::{extract, ExtractLimits, Extracted};
