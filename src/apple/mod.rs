//! Apple's `container` runtime (macOS): the same `ContainerRuntime` through its CLI.

mod apple_runtime;
mod cli_args;
mod cli_detection;
mod inspect_json;

pub use apple_runtime::{AppleContainerRuntime, AppleRuntimeOptions};
pub use cli_detection::apple_cli_version;
