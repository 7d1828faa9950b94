//! The settings a session is resolved from (docs/contract.md §6): its devcontainer.json under
//! the host's trust, its image's metadata merged in, host paths checked, resource limits
//! settled, and the remote environment its tools get; resolved once, at creation, and stored.

mod host_paths;
mod local_feature_dir;
mod metadata_merge;
mod remote_env;
mod session_behaviour;
mod session_resources;
mod settings_resolution;
mod stored_settings;
mod trust;
mod uid_image;
mod user_env_probe;

pub use host_paths::{
    engine_sockets, is_trusted, lexical, local_engine_sockets, reaches_socket, verify_in_clone,
};
pub use local_feature_dir::{checked_local_dir, feature_refused};
pub use metadata_merge::{merge_image_metadata, read_image_metadata};
pub use remote_env::{process_env, resolve_command, substitute_container_env, RemoteEnv};
pub use session_resources::settle_resources;
pub use settings_resolution::{plain_settings, resolve_settings, SettingsRequest};
pub use stored_settings::{ImageChoice, MountOrigin, SessionSettings};
pub use trust::{refused, registry_allowed, Grant, Refusal, Trust};
pub use uid_image::UidImage;
pub use user_env_probe::ProbeCache;
