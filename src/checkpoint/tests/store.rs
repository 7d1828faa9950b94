//! The store: listing, deleting, the bound on how many are kept, the trash.

use super::*;
use crate::checkpoint::{trash_store, CheckpointStore};
use crate::clone::CloneManager;
use crate::error::ErrorCode;

#[test]
fn checkpoints_are_listed_deleted_bounded_and_trashed() {
    let scratch = Scratch::new("cp-store");
    let (base, clone) = (scratch.path("base"), scratch.path("clone"));
    busy_clone(&clone);
    let ids: Vec<String> = (0..4)
        .map(|n| {
            write(&clone, "n.txt", format!("{n}\n"));
            take(&base, "s1", &clone, &format!("n{n}")).id
        })
        .collect();
    assert!(CheckpointStore::existing(&base, "s9").unwrap().is_none());
    assert!(!CheckpointStore::path(&base, "s9").unwrap().exists());
    let store = CheckpointStore::existing(&base, "s1").unwrap().unwrap();
    let listed: Vec<String> = store.list().unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(listed, ids);
    assert_eq!(store.get(&ids[1]).unwrap().label.as_deref(), Some("n1"));

    assert!(store.delete(&ids[1]).unwrap());
    assert!(!store.delete(&ids[1]).unwrap());
    assert_eq!(store.get(&ids[1]).unwrap_err().code, ErrorCode::Enoent);
    assert!(store.commits(&ids[1]).is_err(), "its refs went with it");

    let dropped: Vec<String> = store
        .keep_at_most(2)
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(dropped, vec![ids[0].clone()]);
    let left: Vec<String> = store.list().unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(left, vec![ids[2].clone(), ids[3].clone()]);
    assert_eq!(
        store.get("../x").unwrap_err().code,
        ErrorCode::InvalidArgument
    );

    let clones = CloneManager::new(base.clone());
    let trashed = trash_store(&clones, "s1").unwrap().unwrap();
    assert!(trashed.starts_with(base.join(".trash")));
    assert!(trashed.join("records").is_dir());
    assert!(!CheckpointStore::path(&base, "s1").unwrap().exists());
    assert_eq!(trash_store(&clones, "s1").unwrap(), None);
}
