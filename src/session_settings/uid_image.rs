//! The derived image that `updateRemoteUserUID` asks for, as a session's settings hold it:
//! named after the base image, the remote user and the host user's ids (the build is
//! `session_images`' `uid_image_build`).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The derived image a session runs instead of its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UidImage {
    pub tag: String,
    pub user: String,
    pub uid: u32,
    pub gid: u32,
}

impl UidImage {
    /// Named after the base image, the user and the ids.
    pub fn new(base: &str, user: &str, uid: u32, gid: u32) -> UidImage {
        let key = format!("{base}\0{user}\0{uid}\0{gid}");
        let digest = hex::encode(Sha256::digest(key.as_bytes()));
        UidImage {
            tag: format!("container-isolation-uid-{}:latest", &digest[..16]),
            user: user.to_string(),
            uid,
            gid,
        }
    }
}
