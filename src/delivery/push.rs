//! Sending a session's work out: its HEAD (or a snapshot of its work tree on top) pushed
//! from the host with libgit2, from a staging repository whose config is its own, to the
//! URL and with the credentials of this call only. The clone's remotes, `pushurl`,
//! `insteadOf` rewrites and credential helpers are never read, nor any `insteadOf` of the
//! user's config; its objects are copied and checked on the way, as for `export`.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use git2::{PushOptions as GitPushOptions, RemoteCallbacks};

use super::assemble::{assemble, AssembleOptions, Author};
use super::bounded_thread::{run_bounded, Commitment};
use super::branch_name::branch_ref;
use super::export::open_project;
use super::limits::{Deadline, Limits};
use super::staging::Staging;
use super::write_pause;
use crate::error::{Error, ErrorCode, Result};
use crate::git_transport::{plain_remote, with_transfer, Transfer};

/// What the caller asks of a push.
#[derive(Debug, Clone)]
pub struct PushOptions {
    /// Where to, with which credentials, within which bounds.
    pub transfer: Transfer,
    /// The remote branch's short name.
    pub branch: String,
    pub force: bool,
    pub uncommitted: bool,
    /// The snapshot commit's message.
    pub message: String,
}

/// What a push sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pushed {
    /// The remote ref updated, `refs/heads/<branch>`.
    pub reference: String,
    /// The commit it points at now.
    pub commit: git2::Oid,
    pub head: git2::Oid,
    pub snapshot: Option<git2::Oid>,
}

/// The local ref in the staging repository the push sends from.
const STAGED_REF: &str = "refs/heads/container-isolation-push";

fn rejected(reference: &str, why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::GitPushRejected,
        format!("the remote refused to update {reference}: {why}"),
    )
}

/// Sends `STAGED_REF` to `reference` on the transfer's remote; a refusal of the ref
/// (reported by the remote, or a non-fast-forward libgit2 finds) is GIT_PUSH_REJECTED.
fn send(staging: &Staging, transfer: &Transfer, reference: &str, force: bool) -> Result<()> {
    let refusal: RefCell<Option<String>> = RefCell::new(None);
    let refspec = format!("{}{STAGED_REF}:{reference}", if force { "+" } else { "" });
    let sent = with_transfer(transfer, |url| {
        let mut remote = plain_remote(staging.repo(), None, url)?;
        let mut callbacks = RemoteCallbacks::new();
        callbacks.push_update_reference(|_, status| {
            if let Some(status) = status {
                *refusal.borrow_mut() = Some(status.to_string());
            }
            Ok(())
        });
        let mut opts = GitPushOptions::new();
        opts.remote_callbacks(callbacks);
        remote.push(&[refspec.as_str()], Some(&mut opts))
    });
    if let Err(err) = sent {
        return Err(match err.git_code() {
            Some(git2::ErrorCode::NotFastForward) => {
                rejected(reference, format!("not a fast-forward ({})", err.message))
            }
            _ => err,
        });
    }
    match refusal.into_inner() {
        Some(why) => Err(rejected(reference, why)),
        None => Ok(()),
    }
}

fn push_now(
    clone: &Path,
    project_dir: &Path,
    staging_root: &Path,
    request: (&PushOptions, &Author, &Limits),
    commitment: &Commitment,
) -> Result<Pushed> {
    let (opts, author, limits) = request;
    let deadline = Deadline::after(limits.timeout);
    let reference = branch_ref(&opts.branch)?;
    let project = open_project(project_dir)?;
    let (staging, assembled) = assemble(
        clone,
        &project,
        staging_root,
        &AssembleOptions {
            uncommitted: opts.uncommitted,
            message: &opts.message,
            author,
        },
        limits,
        deadline,
    )?;
    staging
        .repo()
        .reference(
            STAGED_REF,
            assembled.tip(),
            true,
            "container-isolation push",
        )
        .map_err(|e| Error::git("the staging ref", e))?;
    write_pause::before_writing(staging_root);
    commitment.write(&deadline, "push", || {
        send(&staging, &opts.transfer, &reference, opts.force)
    })?;
    Ok(Pushed {
        reference,
        commit: assembled.tip(),
        head: assembled.head,
        snapshot: assembled.snapshot,
    })
}

/// The push, on a thread of its own: the copy within `limits.timeout`; once the transfer
/// has begun it is waited for (the transfer's own time bound ends it).
pub fn push(
    clone: PathBuf,
    project: PathBuf,
    staging_root: PathBuf,
    opts: PushOptions,
    author: Author,
    limits: Limits,
) -> Result<Pushed> {
    run_bounded("push", limits.timeout, move |commitment| {
        push_now(
            &clone,
            &project,
            &staging_root,
            (&opts, &author, &limits),
            commitment,
        )
    })
}
