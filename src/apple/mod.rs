//! Apple's `container` runtime (macOS): the same `ContainerRuntime` through its CLI.

mod apple_runtime;
mod cli_args;
mod inspect_json;

pub use apple_runtime::{AppleContainerRuntime, AppleRuntimeOptions};
