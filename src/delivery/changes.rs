//! What a session changed since its base: its commits, the files changed between the base
//! and its HEAD, its uncommitted work and, when asked, the unified diffs base..HEAD and
//! HEAD..work tree (within one byte bound, the committed one first). A rewritten
//! history (the base no longer an ancestor of HEAD) is answered from the merge base.
//! The whole read runs on its own thread and is answered within the time bound.

use std::path::{Path, PathBuf};

use git2::{Oid, Repository};

use super::bounded_thread::run_bounded;
use super::commits::{commits_since, CommitInfo};
use super::file_changes::{changed_files, FileChange};
use super::hostile_repo::open_clone;
use super::limits::{Deadline, Limits};
use super::patch_text::PatchText;
use super::uncommitted_patch::uncommitted_patch;
use super::worktree_changes::{uncommitted, WorktreeChange};
use crate::error::{Error, Result};

/// What the caller wants besides the lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangesOptions {
    /// Include the unified diffs base..HEAD and HEAD..work tree.
    pub patch: bool,
    /// Where the two diffs together are cut.
    pub max_patch_bytes: usize,
}

/// Which commit the changes are counted from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaseKind {
    /// The session's recorded base, an ancestor of HEAD.
    Recorded,
    /// HEAD's history was rewritten: the merge base of the recorded base and HEAD.
    MergeBase,
    /// HEAD shares no history with the recorded base (or the clone lost it): compared
    /// with the recorded base's tree (the empty tree if lost), every commit of HEAD listed.
    Unrelated,
}

impl BaseKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BaseKind::Recorded => "recorded",
            BaseKind::MergeBase => "merge-base",
            BaseKind::Unrelated => "unrelated",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changes {
    /// The commit compared with.
    pub base: String,
    pub base_kind: BaseKind,
    /// The base recorded when the session was created.
    pub recorded_base: String,
    pub head: String,
    pub commits: Vec<CommitInfo>,
    pub files: Vec<FileChange>,
    pub uncommitted: Vec<WorktreeChange>,
    pub patch: Option<String>,
    pub patch_truncated: bool,
    /// HEAD's tree to the work tree as export's snapshot would record it, with `patch`.
    pub uncommitted_patch: Option<String>,
    pub uncommitted_patch_truncated: bool,
}

/// The base to count from: (commit used, kind, whether it exists in the clone).
fn choose_base(repo: &Repository, recorded: Oid, head: Oid) -> (Oid, BaseKind, bool) {
    if repo.find_commit(recorded).is_err() {
        return (recorded, BaseKind::Unrelated, false);
    }
    if recorded == head || repo.graph_descendant_of(head, recorded).unwrap_or(false) {
        return (recorded, BaseKind::Recorded, true);
    }
    match repo.merge_base(head, recorded) {
        Ok(merge_base) => (merge_base, BaseKind::MergeBase, true),
        Err(_) => (recorded, BaseKind::Unrelated, true),
    }
}

/// The changes of the clone at `clone` since `recorded_base`, on the calling thread.
pub fn read_changes(
    clone: &Path,
    recorded_base: Oid,
    opts: &ChangesOptions,
    limits: &Limits,
) -> Result<Changes> {
    let deadline = Deadline::after(limits.timeout);
    let repo = open_clone(clone, limits)?;
    let head = repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(|e| Error::git("the clone's HEAD", e))?;
    let head_tree = head.tree().map_err(|e| Error::git("HEAD's tree", e))?;
    let (base, base_kind, present) = choose_base(&repo, recorded_base, head.id());
    let base_tree = match present {
        true => Some(
            repo.find_commit(base)
                .and_then(|c| c.tree())
                .map_err(|e| Error::git("the base's tree", e))?,
        ),
        false => None,
    };
    deadline.check("changes")?;
    let hide = (present && base_kind != BaseKind::Unrelated).then_some(base);
    let commits = commits_since(&repo, hide, head.id(), limits, deadline)?;
    let mut patch = opts.patch.then(|| PatchText::new(opts.max_patch_bytes));
    let files = changed_files(
        &repo,
        base_tree.as_ref(),
        &head_tree,
        limits,
        deadline,
        patch.as_mut(),
    )?;
    let uncommitted = uncommitted(&repo, clone, Some(&head_tree), limits, deadline)?;
    let mut work_patch = patch.as_ref().map(|p| PatchText::new(p.room()));
    if let Some(text) = work_patch.as_mut().filter(|_| !uncommitted.is_empty()) {
        uncommitted_patch(&repo, clone, &head, text, limits, deadline)?;
    }
    let (patch, patch_truncated) = finished(patch);
    let (uncommitted_patch, uncommitted_patch_truncated) = finished(work_patch);
    Ok(Changes {
        base: base.to_string(),
        base_kind,
        recorded_base: recorded_base.to_string(),
        head: head.id().to_string(),
        commits,
        files,
        uncommitted,
        patch,
        patch_truncated,
        uncommitted_patch,
        uncommitted_patch_truncated,
    })
}

fn finished(text: Option<PatchText>) -> (Option<String>, bool) {
    match text.map(PatchText::finish) {
        Some((text, cut)) => (Some(text), cut),
        None => (None, false),
    }
}

/// `read_changes` on a thread of its own, answered within `limits.timeout`.
pub fn changes(
    clone: PathBuf,
    recorded_base: Oid,
    opts: ChangesOptions,
    limits: Limits,
) -> Result<Changes> {
    run_bounded("changes", limits.timeout, move |_| {
        read_changes(&clone, recorded_base, &opts, &limits)
    })
}
