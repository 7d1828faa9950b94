//! devcontainer.json: JSONC, lookup, variables, lifecycle commands, mounts, `runArgs` and
//! warnings for what is not honoured, read without policy (a session's trust check decides
//! what may reach the host).

mod build_config;
mod byte_size;
mod compose;
mod config;
mod dockerfile_bases;
mod feature_metadata;
mod feature_order;
mod features;
mod fields;
mod host_env;
mod host_requirements;
mod image_metadata;
mod jsonc;
mod lifecycle;
mod lookup;
pub use lookup::find_config;
mod mount_spec;
mod oci_reference;
mod port_requests;
mod run_args;
mod unhonoured;
mod variables;

pub use build_config::BuildConfig;
pub use compose::ComposeConfig;
pub use config::{
    devcontainer_id, read_devcontainer_config, read_devcontainer_config_with, read_for_session,
    DevcontainerConfig, ReadOptions, DEFAULT_WORKSPACE_FOLDER, WAIT_FOR,
};
pub use dockerfile_bases::base_images;
pub use feature_metadata::{
    option_env_name, parse_feature_metadata, FeatureMetadata, FEATURE_JSON_LIMIT,
};
pub use feature_order::{install_order, OrderNode};
pub use features::{parse_options, FeatureRequest, FeatureSource, OptionValue};
pub use host_env::HostEnv;
pub use host_requirements::{Available, HostRequirements};
pub use image_metadata::{
    parse_image_metadata, MetadataEntry, METADATA_LABEL, SHUTDOWN_ACTIONS, USER_ENV_PROBES,
};
pub use lifecycle::{Command, LifecycleCommand};
pub use mount_spec::{MountKind, MountSpec};
pub use oci_reference::{parse_oci_ref, OciRef};
pub use port_requests::PortRequest;
pub use run_args::RunArgs;
pub use variables::{env_value, substitute_with};
