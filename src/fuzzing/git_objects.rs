//! `git_fsck`'s tree and commit checks against libgit2's own parser: a tree ours accepts,
//! libgit2 parses to the same entries (ids and kinds, in order); a commit ours accepts, to
//! the same tree and parents. The first byte picks the kind (even: tree, odd: commit), the
//! rest is the object. `cargo test` also replays the corpus through `git fsck --strict`.

use git2::{ObjectType, Odb, Oid, Repository};

use crate::git_fsck::{check_commit, check_tree, EntryKind};

/// A repository whose objects live in memory only, holding `data` as an object of `kind`.
fn in_memory(kind: ObjectType, data: &[u8]) -> (Repository, Oid) {
    let odb = Odb::new().expect("an object database");
    odb.add_new_mempack_backend(1).expect("a memory backend");
    let repo = Repository::from_odb(odb).expect("a repository over it");
    let id = repo
        .odb()
        .unwrap()
        .write(kind, data)
        .expect("the object is stored");
    (repo, id)
}

fn kind_of_mode(mode: i32) -> Option<EntryKind> {
    match mode {
        0o100644 | 0o100755 => Some(EntryKind::File),
        0o120000 => Some(EntryKind::Symlink),
        0o040000 => Some(EntryKind::Tree),
        0o160000 => Some(EntryKind::Gitlink),
        _ => None,
    }
}

/// The object `data` says it is: a tree (`true`) or a commit, and its bytes.
pub fn split(data: &[u8]) -> Option<(bool, &[u8])> {
    let (first, object) = data.split_first()?;
    Some((first % 2 == 0, object))
}

pub fn check_git_objects(data: &[u8]) {
    let Some((tree, object)) = split(data) else {
        return;
    };
    if tree {
        let Ok(ours) = check_tree(object) else { return };
        let (repo, id) = in_memory(ObjectType::Tree, object);
        let theirs = repo
            .find_tree(id)
            .expect("libgit2 parses a tree ours accepts");
        let theirs: Vec<_> = theirs
            .iter()
            .map(|e| (e.id(), kind_of_mode(e.filemode())))
            .collect();
        let ours: Vec<_> = ours.iter().map(|e| (e.id, Some(e.kind))).collect();
        assert_eq!(ours, theirs, "the tree's entries");
    } else {
        let Ok(ours) = check_commit(object) else {
            return;
        };
        let (repo, id) = in_memory(ObjectType::Commit, object);
        let theirs = repo
            .find_commit(id)
            .expect("libgit2 parses a commit ours accepts");
        assert_eq!(ours.tree, theirs.tree_id(), "the commit's tree");
        assert_eq!(
            ours.parents,
            theirs.parent_ids().collect::<Vec<_>>(),
            "its parents"
        );
    }
}
