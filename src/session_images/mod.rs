//! The images built for a session (docs/contract.md §6): its image pulled under the pull
//! policy, a devcontainer.json `build`, the derived image its features are installed in, the
//! `updateRemoteUserUID` image, each labelled as this library's; and the pruning of those
//! no container uses.

mod feature_fetch;
mod feature_image;
mod feature_set;
mod feature_source;
mod image_build;
mod image_prune;
mod image_supply;
mod uid_image_build;

pub use feature_image::ensure_feature_image;
pub use image_build::build_image;
pub use image_prune::{prune_images, PruneReport, PruneRequest};
pub use image_supply::{DerivedKind, ImageSupply};
pub use uid_image_build::ensure_uid_image;
