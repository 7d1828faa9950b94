//! Magenta's `FileIO` inside a container (docs/contract.md §3): the archive endpoints for
//! any image, the host file system for bind mounts, never a container-controlled symlink
//! followed on the host.

mod account_files;
mod container_facts;
mod container_root;
mod docker_file_io;
mod engine_paths;
pub(crate) mod fd_ops;
mod file_operations;
mod file_replace;
mod host_files;

pub use account_files::AccountFiles;
pub use container_root::close_roots;
pub use docker_file_io::{DockerFileIo, FileIoOptions, FileStat};
