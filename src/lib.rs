//! container-isolation: isolated, per-session containers for AI coding agents.
//!
//! The core modules (`engine`, `runtime`, `output`) are plain Rust and know nothing of N-API;
//! `binding` is the thin layer that exposes them to Node.js.

pub mod agent;
pub mod apple;
pub mod base_dir;
pub mod checkpoint;
pub mod clone;
pub mod compose;
pub mod compose_services;
pub mod container_archive;
pub mod container_environment;
pub mod container_runtime;
pub mod delivery;
pub mod devcontainer;
pub mod egress;
pub mod engine;
pub mod error;
pub mod fileio;
#[cfg(test)]
mod fuzzing;
pub mod git;
pub mod git_fsck;
pub mod git_transport;
pub mod kubernetes;
pub mod output;
pub mod pod_workspaces;
pub mod progress;
pub mod project_dir;
pub mod reaper;
pub mod refusal;
pub mod registry_auth;
pub mod registry_probe;
pub mod runtime;
#[cfg(test)]
mod scratch_dir;
pub mod session_images;
pub mod session_settings;
pub mod shell;
pub mod tar_extract;
pub mod terminal;
pub mod text_search;
pub mod warm_pool;
pub mod workspace;
pub mod workspace_volume;

#[cfg_attr(test, allow(dead_code))]
mod binding;
