//! The clone's config and alternates checked as libgit2 itself reads them: when the check
//! passes, libgit2 follows no include and loads no object directory outside the clone.

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

/// Whether libgit2, opening the clone's git directory, finds `id`.
fn libgit2_finds(git_dir: &Path, id: Oid) -> bool {
    let repo = Repository::open_bare(git_dir).unwrap();
    let found = repo.odb().unwrap().exists(id);
    found
}

#[test]
fn a_cr_in_alternates_splits_the_entry_as_libgit2_splits_it() {
    let (clone, outside) = (Scratch::new("clone"), Scratch::new("outside"));
    let (_, base) = simple(&clone.0);
    let secret = init(&outside.0).blob(b"outside only\n").unwrap();
    let git_dir = clone.0.join(".git");
    // One directory for a reader of lines, which the clone makes inside itself; for
    // libgit2 `x` and the outside repository's objects.
    let entry = format!("x\r{}", outside.0.join(".git/objects").display());
    std::fs::create_dir_all(git_dir.join("objects").join(&entry)).unwrap();
    write(&git_dir, "objects/info/alternates", format!("{entry}\n"));
    assert!(libgit2_finds(&git_dir, secret), "libgit2 reads outside");
    refused(&clone.0, base);
}

#[test]
fn alternates_relative_to_no_directory_of_the_clone_are_refused() {
    let clone = Scratch::new("clone");
    let (_, base) = simple(&clone.0);
    let git_dir = clone.0.join(".git");
    let beside = Repository::init_bare(git_dir.join("objects/extra")).unwrap();
    let id = beside.blob(b"beside\n").unwrap();
    // libgit2 joins an entry to the objects directory only when it starts with `.`; any
    // other relative one is taken from the host process's working directory.
    write(&git_dir, "objects/info/alternates", "extra/objects\n");
    assert!(!libgit2_finds(&git_dir, id), "not read from objects/");
    refused(&clone.0, base);
    write(
        &git_dir,
        "objects/info/alternates",
        "\t# not a comment to libgit2\n",
    );
    refused(&clone.0, base);
    write(
        &git_dir,
        "objects/info/alternates",
        "./extra/objects\r\n# note\n",
    );
    assert!(libgit2_finds(&git_dir, id));
    read(&clone.0, base);
}
