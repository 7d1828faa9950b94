//! The N-API binding: converts JavaScript values to core types and back, maps core errors to
//! coded JS errors, and bridges callbacks. No engine logic lives here.

mod apple_container_runtime;
mod checkpoints;
mod clone_manager;
mod compose_project;
mod compose_service;
mod container_git_client;
mod container_types;
mod delivery;
mod devcontainer;
mod docker_environment;
mod docker_file_io;
mod docker_runtime;
mod docker_shell;
mod durations;
mod egress;
mod engine;
mod environment_options;
mod error;
mod exec_stream;
mod exit_hooks;
mod export;
mod file_io_values;
mod git_remote;
mod image_prune;
mod kubernetes_check;
mod kubernetes_environment;
mod kubernetes_file_io;
mod kubernetes_runtime;
mod line_delivery;
mod naming;
mod port_forward;
mod progress;
mod push;
mod reap_orphans;
mod resources;
mod runtime_calls;
mod terminal;
mod text_search;
mod trust;
mod warm_pool;
mod watchdog;
mod workspace_info;
mod workspace_sessions;
mod workspaces;
mod workspaces_options;
mod workspaces_pool;

/// libgit2's network transports replaced by `git_transport`'s when the addon loads, before
/// any thread can use libgit2 (its registry of transports has no lock).
#[napi_derive::module_init]
fn register_git_transports() {
    let _ = crate::git_transport::ensure_registered();
}
