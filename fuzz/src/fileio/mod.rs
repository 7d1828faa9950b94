//! The descriptor-relative file operations the archive extractor stands on, from `src/fileio/`.

#[path = "../../../src/fileio/fd_ops.rs"]
pub mod fd_ops;
