//! The Engine API side: finding an engine, connecting to it, reading its errors, and
//! pulling images into it.

mod connection;
mod container_queries;
mod endpoint;
mod engine_error;
mod image_pull;
mod info;
mod options;
mod output_frames;

pub use connection::{detect, Engine};
pub use endpoint::{candidates, Candidate, DetectionEnv, Endpoint};
pub use engine_error::{code_for_status, describe, from_bollard};
pub use image_pull::{
    ensure_image, image_present, not_pulled, pull_image, ImageReference, ImageRequest, PullPolicy,
};
pub use info::EngineInfo;
pub use options::{EngineKind, EngineOptions, DEFAULT_TIMEOUT};
pub use output_frames::FrameDemux;
