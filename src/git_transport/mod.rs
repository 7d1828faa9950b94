//! Fetch and push to real remotes from the host process, never from a container: custom
//! libgit2 smart subtransports in Rust (smart HTTP(S) through reqwest, SSH through the
//! system `ssh`), registered once, serving only the transfer in effect on the calling
//! thread, with credentials from the caller alone.
//!
//! ```ignore
//! let transfer = Transfer { url: RemoteUrl::parse("https://example.com/repo.git")?, .. };
//! with_transfer(&transfer, |url| {
//!     let mut remote = repo.remote_anonymous(url)?;
//!     remote.push(&["refs/heads/main:refs/heads/main"], None)
//! })?;
//! ```

mod context;
mod credentials;
mod http_client;
mod http_subtransport;
mod plain_remote;
mod registration;
mod remote_url;
mod ssh_command;
mod ssh_process;
mod ssh_subtransport;
mod transfer;
mod with_transfer;

#[cfg(test)]
mod tests;

pub use credentials::{Credentials, GivenCredentials, Secret};
pub use plain_remote::plain_remote;
pub use registration::ensure_registered;
pub use remote_url::{RemoteKind, RemoteUrl};
pub use transfer::Transfer;
pub use with_transfer::with_transfer;
