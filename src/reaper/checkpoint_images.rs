//! Checkpoint images whose session is gone (destroyed, or its record removed while a
//! fork's container still used the image): removed once no container uses them.

use std::path::Path;

use crate::checkpoint::{checkpoint_images, remove_checkpoint_image};
use crate::engine::Engine;
use crate::error::Result;
use crate::workspace::load_record;

/// Removes the checkpoint images of `base_dir` whose session has no record; an image a
/// container still uses stays. The ids removed (or, with `dry_run`, that would be).
pub async fn reap_checkpoint_images(
    engine: &Engine,
    base_dir: &Path,
    dry_run: bool,
) -> Result<Vec<String>> {
    let base = base_dir.to_string_lossy();
    let mut removed = Vec::new();
    for image in checkpoint_images(engine, &base, None).await? {
        if load_record(base_dir, &image.session)?.is_some() {
            continue;
        }
        if !dry_run {
            remove_checkpoint_image(engine, &image.id).await?;
        }
        removed.push(image.id);
    }
    Ok(removed)
}
