//! The session's commits since its base, newest first, as `git log base..HEAD` lists
//! them; at most `max_commits`, else `LIMIT_EXCEEDED`.

use git2::{Oid, Repository, Sort};

use super::file_changes::lossy;
use super::limits::{exceeded, Deadline, Limits};
use crate::error::{Error, ErrorCode, Result};

/// One commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitInfo {
    pub id: String,
    /// The first line of its message.
    pub summary: String,
    pub author_name: String,
    pub author_email: String,
    /// The author's time, Unix milliseconds.
    pub time_ms: i64,
}

fn git_error(err: git2::Error) -> Error {
    Error::new(ErrorCode::Git, format!("commits: {}", err.message()))
}

/// Commits reachable from `head` and not from `hide`.
pub fn commits_since(
    repo: &Repository,
    hide: Option<Oid>,
    head: Oid,
    limits: &Limits,
    deadline: Deadline,
) -> Result<Vec<CommitInfo>> {
    let mut walk = repo.revwalk().map_err(git_error)?;
    walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME)
        .map_err(git_error)?;
    walk.push(head).map_err(git_error)?;
    if let Some(hide) = hide {
        walk.hide(hide).map_err(git_error)?;
    }
    let mut commits = Vec::new();
    for id in walk {
        if commits.len() >= limits.max_commits {
            return Err(exceeded("commits since the base", limits.max_commits));
        }
        if commits.len() % 256 == 0 {
            deadline.check("commits")?;
        }
        let commit = repo
            .find_commit(id.map_err(git_error)?)
            .map_err(git_error)?;
        let author = commit.author();
        commits.push(CommitInfo {
            id: commit.id().to_string(),
            summary: lossy(commit.summary_bytes()),
            author_name: lossy(Some(author.name_bytes())),
            author_email: lossy(Some(author.email_bytes())),
            time_ms: author.when().seconds().saturating_mul(1000),
        });
    }
    Ok(commits)
}
