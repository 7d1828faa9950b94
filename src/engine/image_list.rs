//! Listing images by one label, through Podman's unlocked list.
//!
//! One label filter: Podman 4's Docker-compatible list answers none for two. And Podman
//! before 4.6 reads the store's list of images, then each image's config, without holding
//! the store between the two: an image another client removes meanwhile fails the whole
//! list with a 500 naming it ("locating image with ID …: image not known",
//! containers/podman#18980). Asked again, it lists the images that are left.

use std::collections::HashMap;
use std::time::Duration;

use bollard::models::ImageSummary;
use bollard::query_parameters::ListImagesOptionsBuilder;

use super::connection::Engine;
use crate::error::{Error, ErrorCode, Result};

/// How many times the list is asked for while answers name an image that went away.
const LIST_ATTEMPTS: u32 = 5;

/// Whether a failed list names an image (or a layer) removed while it was being read.
fn lost_an_image(err: &Error) -> bool {
    err.code == ErrorCode::EngineError
        && ["image not known", "layer not known"]
            .iter()
            .any(|m| err.message.contains(m))
}

impl Engine {
    /// `GET /images/json` of the images labelled `label` (`key` or `key=value`), `subject`
    /// naming the list in errors.
    pub async fn labelled_images(&self, label: &str, subject: &str) -> Result<Vec<ImageSummary>> {
        let filters = HashMap::from([("label", vec![label.to_string()])]);
        let options = ListImagesOptionsBuilder::default()
            .filters(&filters)
            .build();
        let mut attempt = 1;
        loop {
            let listed = self
                .call(subject, self.docker().list_images(Some(options.clone())))
                .await;
            match listed {
                Err(err) if attempt < LIST_ATTEMPTS && lost_an_image(&err) => {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                other => return other,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_vanished_image_or_layer_is_asked_again() {
        let engine_error = |m: &str| Error::new(ErrorCode::EngineError, m);
        assert!(lost_an_image(&engine_error(
            "checkpoint images: reading image \"89b8\": locating image with ID \"89b8\": image not known"
        )));
        assert!(lost_an_image(&engine_error("layer not known")));
        assert!(!lost_an_image(&engine_error("no space left on device")));
        let unavailable = Error::new(ErrorCode::EngineUnavailable, "image not known");
        assert!(!lost_an_image(&unavailable));
    }
}
