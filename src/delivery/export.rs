//! Bringing a session's work home: `refs/heads/<branch>` written in the user's project,
//! pointing at the session's HEAD (or at a snapshot of its work tree on top), after the
//! objects the project lacks were copied from the clone and checked in a staging
//! repository. Nothing else of the project is touched: not HEAD, the index, the work
//! tree, the config, the hooks or another ref. An existing branch is refused unless
//! `force`; a branch checked out in the project or one of its worktrees, always. The
//! objects and the ref are written only while the caller still waits (a `TIMEOUT`
//! wrote nothing).

use std::path::{Path, PathBuf};

use git2::{Oid, Repository, RepositoryOpenFlags};

use super::assemble::{assemble, AssembleOptions, Author};
use super::bounded_thread::{run_bounded, Commitment};
use super::branch_name::branch_ref;
use super::limits::{Deadline, Limits};
use super::write_pause;
use crate::error::{Error, ErrorCode, Result};

/// What the caller asks of an export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportOptions {
    /// The branch's short name.
    pub branch: String,
    pub uncommitted: bool,
    /// The snapshot commit's message.
    pub message: String,
    pub force: bool,
}

/// What an export did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    /// The full ref written, `refs/heads/<branch>`.
    pub reference: String,
    /// Where it points now.
    pub commit: Oid,
    /// The clone's HEAD.
    pub head: Oid,
    /// The snapshot of uncommitted work, when one was made.
    pub snapshot: Option<Oid>,
    /// Where the branch pointed before (`force` over an existing branch).
    pub previous: Option<Oid>,
    /// Objects the project did not have.
    pub objects_copied: usize,
    /// The repository the branch was written in.
    pub project: PathBuf,
}

/// Where the project's HEAD and its worktrees' HEADs point, as ref names.
fn checked_out(project: &Repository) -> Vec<String> {
    let head_of = |repo: &Repository| {
        repo.find_reference("HEAD")
            .ok()
            .and_then(|r| r.symbolic_target().ok().flatten().map(str::to_string))
    };
    let mut refs: Vec<String> = head_of(project).into_iter().collect();
    if let Ok(names) = project.worktrees() {
        for name in names.iter().filter_map(|n| n.ok().flatten()) {
            let head = project
                .find_worktree(name)
                .and_then(|wt| Repository::open_from_worktree(&wt))
                .ok()
                .and_then(|repo| head_of(&repo));
            refs.extend(head);
        }
    }
    refs
}

/// The project's repository, at exactly `project` (no search upwards).
pub fn open_project(project: &Path) -> Result<Repository> {
    Repository::open_ext(
        project,
        RepositoryOpenFlags::NO_SEARCH,
        std::iter::empty::<&str>(),
    )
    .map_err(|e| Error::git(&format!("project {}", project.display()), e))
}

/// The branch's current commit; refuses a checked-out branch, and an existing one without
/// `force`.
fn check_branch(project: &Repository, reference: &str, force: bool) -> Result<Option<Oid>> {
    if checked_out(project).iter().any(|r| r == reference) {
        return Err(Error::invalid_argument(format!(
            "{reference} is checked out in the project: export to another branch"
        )));
    }
    let current = project.refname_to_id(reference).ok();
    if current.is_some() && !force {
        return Err(Error::new(
            ErrorCode::Eexist,
            format!("{reference} exists in the project: pass force to move it"),
        ));
    }
    Ok(current)
}

fn export_now(
    clone: &Path,
    project_dir: &Path,
    staging_root: &Path,
    request: (&ExportOptions, &Author, &Limits),
    commitment: &Commitment,
) -> Result<Exported> {
    let (opts, author, limits) = request;
    let deadline = Deadline::after(limits.timeout);
    let reference = branch_ref(&opts.branch)?;
    let project = open_project(project_dir)?;
    check_branch(&project, &reference, opts.force)?;
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
    write_pause::before_writing(staging_root);
    commitment.write(&deadline, "export", || {
        let objects_copied = assembled.objects + staging.move_objects_into(&project)?;
        let previous = write_branch(&project, &reference, assembled.tip(), opts.force)?;
        Ok(Exported {
            reference: reference.clone(),
            commit: assembled.tip(),
            head: assembled.head,
            snapshot: assembled.snapshot,
            previous,
            objects_copied,
            project: project_dir.to_path_buf(),
        })
    })
}

/// `reference` pointed at `tip`, unless it moved since it was checked; where it pointed.
fn write_branch(
    project: &Repository,
    reference: &str,
    tip: Oid,
    force: bool,
) -> Result<Option<Oid>> {
    let previous = check_branch(project, reference, force)?;
    let log = format!("container-isolation: export of {tip}");
    let written = match previous {
        Some(old) => project.reference_matching(reference, tip, true, old, &log),
        None => project.reference(reference, tip, false, &log),
    };
    written.map_err(|e| match e.code() {
        git2::ErrorCode::Exists | git2::ErrorCode::Modified => Error::new(
            ErrorCode::Eexist,
            format!(
                "{reference} changed in the project during the export: {}",
                e.message()
            ),
        ),
        _ => Error::git(&format!("writing {reference}"), e),
    })?;
    Ok(previous)
}

/// The export, on a thread of its own within `limits.timeout`.
pub fn export(
    clone: PathBuf,
    project: PathBuf,
    staging_root: PathBuf,
    opts: ExportOptions,
    author: Author,
    limits: Limits,
) -> Result<Exported> {
    run_bounded("export", limits.timeout, move |commitment| {
        export_now(
            &clone,
            &project,
            &staging_root,
            (&opts, &author, &limits),
            commitment,
        )
    })
}
