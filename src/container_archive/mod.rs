//! A container's files through the Engine API's archive endpoints alone (no exec, no
//! agent): reading, writing and stat-ing by path, the tar streams those endpoints speak,
//! and container paths as strings. The agent uploads itself with it; `fileio` builds
//! Magenta's `FileIO` on it.

mod container_path;
mod engine_files;
mod path_stat;
mod tar_stream;

pub use container_path::{join, normalize, resolve, split, strip_base, too_long};
pub use engine_files::{file_error, too_large, EngineFiles};
pub use path_stat::PathStat;
pub use tar_stream::EntryOwner;
