//! Diffs with a bound on the files they list and a deadline, enforced while libgit2 builds
//! them (its notify and progress callbacks, which git2 does not expose): a tree that
//! expands to millions of files is stopped at the bound, not listed whole first.

use std::ffi::{c_char, c_int, c_void};

use git2::{Binding, Diff, DiffOptions, Index, Repository, Tree};
use libgit2_sys as raw;

use super::limits::{exceeded, Deadline};
use crate::error::{Error, ErrorCode, Result};

/// What is compared.
pub enum Sides<'a> {
    Trees(Option<&'a Tree<'a>>, &'a Tree<'a>),
    TreeToIndex(Option<&'a Tree<'a>>, &'a Index),
    IndexToWorkdir(&'a Index),
}

struct Guard {
    max_files: usize,
    files: usize,
    deadline: Deadline,
    stopped: Option<Error>,
}

extern "C" fn on_delta(
    _diff: *const raw::git_diff,
    _delta: *const raw::git_diff_delta,
    _pathspec: *const c_char,
    payload: *mut c_void,
) -> c_int {
    // SAFETY: `payload` is the `Guard` that `diff` lends libgit2 for this call only.
    let guard = unsafe { &mut *(payload as *mut Guard) };
    guard.files += 1;
    if guard.files > guard.max_files {
        guard.stopped = Some(exceeded("files listed", guard.max_files));
        return -1;
    }
    on_time(guard)
}

extern "C" fn on_progress(
    _diff: *const raw::git_diff,
    _old: *const c_char,
    _new: *const c_char,
    payload: *mut c_void,
) -> c_int {
    // SAFETY: as in `on_delta`.
    on_time(unsafe { &mut *(payload as *mut Guard) })
}

fn on_time(guard: &mut Guard) -> c_int {
    if guard.deadline.passed() {
        guard.stopped = Some(guard.deadline.error("diff"));
        return -1;
    }
    0
}

fn tree_ptr(tree: Option<&Tree>) -> *mut raw::git_tree {
    tree.map_or(std::ptr::null_mut(), |t| t.raw())
}

/// The diff of `sides` under `opts`; `LIMIT_EXCEEDED` past `max_files` entries, `TIMEOUT`
/// past the deadline.
pub fn diff<'r>(
    repo: &'r Repository,
    sides: Sides,
    opts: &mut DiffOptions,
    max_files: usize,
    deadline: Deadline,
) -> Result<Diff<'r>> {
    let mut guard = Guard {
        max_files,
        files: 0,
        deadline,
        stopped: None,
    };
    // SAFETY: a bitwise copy of the options git2 built (their pathspec stays owned by
    // `opts`, which outlives the call); only the callbacks and their payload are set.
    let mut raw_opts: raw::git_diff_options = unsafe { std::ptr::read(opts.raw()) };
    raw_opts.notify_cb = Some(on_delta);
    raw_opts.progress_cb = Some(on_progress);
    raw_opts.payload = &mut guard as *mut Guard as *mut c_void;
    let mut out: *mut raw::git_diff = std::ptr::null_mut();
    // SAFETY: every pointer is a live libgit2 object borrowed for the call.
    let rc = unsafe {
        match sides {
            Sides::Trees(old, new) => raw::git_diff_tree_to_tree(
                &mut out,
                repo.raw(),
                tree_ptr(old),
                new.raw(),
                &raw_opts,
            ),
            Sides::TreeToIndex(old, index) => raw::git_diff_tree_to_index(
                &mut out,
                repo.raw(),
                tree_ptr(old),
                index.raw(),
                &raw_opts,
            ),
            Sides::IndexToWorkdir(index) => {
                raw::git_diff_index_to_workdir(&mut out, repo.raw(), index.raw(), &raw_opts)
            }
        }
    };
    if let Some(err) = guard.stopped.take() {
        if !out.is_null() {
            // SAFETY: a diff libgit2 handed out, freed once.
            unsafe { raw::git_diff_free(out) };
        }
        return Err(err);
    }
    if rc < 0 {
        let err = git2::Error::last_error(rc);
        return Err(Error::new(
            ErrorCode::Git,
            format!("diff: {}", err.message()),
        ));
    }
    // SAFETY: a diff libgit2 made for `repo`; `Diff` frees it once.
    Ok(unsafe { Diff::from_raw(out) })
}
