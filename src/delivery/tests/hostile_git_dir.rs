//! The clone's config checked as libgit2 itself reads it: when the check passes, libgit2
//! follows no include.

use super::hostile::{refused, simple};
use super::*;

/// Whether libgit2, opening the clone's git directory, reads `marker.loaded` (which only
/// the included file sets).
fn libgit2_includes(git_dir: &Path) -> bool {
    let repo = Repository::open_bare(git_dir).unwrap();
    let config = repo.config().unwrap().snapshot().unwrap();
    config.get_str("marker.loaded").is_ok()
}

#[test]
fn every_include_libgit2_follows_is_refused() {
    let (clone, outside) = (Scratch::new("clone"), Scratch::new("outside"));
    let (_, base) = simple(&clone.0);
    let included = outside.path("included");
    std::fs::write(&included, "[marker]\n\tloaded = yes\n").unwrap();
    let path = included.display();
    let git_dir = clone.0.join(".git");
    let config = std::fs::read_to_string(git_dir.join("config")).unwrap();
    for (case, text) in [
        ("plain", format!("{config}[include]\n\tpath = {path}\n")),
        (
            "a BOM",
            format!("\u{feff}[include]\n\tpath = {path}\n{config}"),
        ),
        (
            "after a header",
            format!("{config}[core] [include]\n\tpath = {path}\n"),
        ),
        (
            "conditional, after a header",
            format!("{config}[core]\t[includeIf \"gitdir:/\"]\n\tpath = {path}\n"),
        ),
        (
            "upper case, after two headers",
            format!("{config}[core][user] [INCLUDE]path = {path}\n"),
        ),
    ] {
        write(&git_dir, "config", &text);
        assert!(libgit2_includes(&git_dir), "{case}: libgit2 follows it");
        refused(&clone.0, base);
    }
    for (case, text) in [
        ("none", config.clone()),
        (
            "the word elsewhere",
            format!("{config}[branch \"include\"]\n\tpath = {path}\n[core]\n\tinclude = {path}\n"),
        ),
    ] {
        write(&git_dir, "config", &text);
        assert!(!libgit2_includes(&git_dir), "{case}");
        read(&clone.0, base);
    }
}
