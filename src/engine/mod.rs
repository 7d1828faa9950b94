//! The Engine API side: finding an engine (local socket, tcp with TLS, ssh, docker
//! contexts), connecting to it, reading its errors, and
//! pulling images into it.

mod chunk_sender;
mod connection;
mod container_queries;
mod detection;
mod detection_env;
mod docker_context;
mod endpoint;
mod engine_connect;
mod engine_error;
mod image_list;
mod image_lookup;
mod image_pull;
mod info;
mod local_probe;
mod options;
mod output_frames;
mod probe;
mod ssh_target;
mod ssh_tunnel;
mod tls;

pub use chunk_sender::{chunk_channel, ChunkSender};
pub use connection::Engine;
pub use detection::{candidates, Candidate};
pub use detection_env::DetectionEnv;
pub use endpoint::Endpoint;
pub use engine_connect::detect;
pub use engine_error::{code_for_status, from_bollard};
pub use image_lookup::{find_image, image_present};
pub use image_pull::{
    ensure_image, not_pulled, pull_image, ImageReference, ImageRequest, PullPolicy,
};
pub use info::EngineInfo;
pub use local_probe::PROBE_LABEL;
pub use options::{EngineKind, EngineOptions, SshOptions, TlsOptions, DEFAULT_TIMEOUT};
pub use output_frames::FrameDemux;
