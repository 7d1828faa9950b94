//! The session's commits since its base, newest first, as `git log base..HEAD` lists
//! them; at most `max_commits`, else `LIMIT_EXCEEDED`.

use git2::{Oid, Repository, Sort};

use super::file_changes::lossy;
use super::limits::{exceeded, Deadline, Limits};
use crate::error::{Error, Result};

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

/// Commits reachable from `head` and not from `hide`.
pub fn commits_since(
    repo: &Repository,
    hide: Option<Oid>,
    head: Oid,
    limits: &Limits,
    deadline: Deadline,
) -> Result<Vec<CommitInfo>> {
    let mut walk = repo.revwalk().map_err(|e| Error::git("commits", e))?;
    walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME)
        .map_err(|e| Error::git("commits", e))?;
    walk.push(head).map_err(|e| Error::git("commits", e))?;
    if let Some(hide) = hide {
        walk.hide(hide).map_err(|e| Error::git("commits", e))?;
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
            .find_commit(id.map_err(|e| Error::git("commits", e))?)
            .map_err(|e| Error::git("commits", e))?;
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
