//! A session's repository in a named engine volume, for engines that cannot see this
//! machine's files: the volume made and removed with our labels, a host directory uploaded
//! into a created container through the archive endpoint, and a container directory read
//! back into a fresh host directory (as untrusted input, see `crate::tar_extract`).

mod member_volume;
mod reader_container;
mod tree_download;
mod tree_upload;
mod volume_store;

pub use member_volume::remove_member_volume;
pub use reader_container::{read_volume, VolumeRead};
pub use tree_download::download_tree;
pub use tree_upload::{tree_tar, upload_tree};
pub use volume_store::{
    create_volume, labelled_volumes, remove_volume, volume_exists, volume_labels_of, volume_name,
};
