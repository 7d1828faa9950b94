use super::*;

fn tree(entries: &[(&str, &str)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (n, (mode, name)) in entries.iter().enumerate() {
        out.extend_from_slice(mode.as_bytes());
        out.push(b' ');
        out.extend_from_slice(name.as_bytes());
        out.push(0);
        out.extend_from_slice(&[n as u8 + 1; 20]);
    }
    out
}

fn id(entries: &[(&str, &str)]) -> Option<&'static str> {
    check_tree(&tree(entries)).err().map(|f| f.id)
}

#[test]
fn a_tree_git_writes_passes_with_its_kinds_and_special_files() {
    let entries = check_tree(&tree(&[
        ("100644", ".gitattributes"),
        ("100644", ".gitmodules"),
        ("100644", "a"),
        ("100644", "a.b"),
        ("40000", "a"),
        ("120000", "link"),
        ("160000", "sub"),
        ("100755", "x.sh"),
    ]));
    assert_eq!(
        entries.as_ref().err().map(|f| f.id),
        Some("duplicateEntries"),
        "file a and directory a"
    );
    let entries = check_tree(&tree(&[
        ("100644", ".gitattributes"),
        ("100644", ".gitmodules"),
        ("100644", "a.b"),
        ("40000", "a"),
        ("100644", "a0"),
        ("120000", "link"),
        ("160000", "sub"),
        ("100755", "x.sh"),
    ]))
    .unwrap();
    let kinds: Vec<EntryKind> = entries.iter().map(|e| e.kind).collect();
    use EntryKind::*;
    assert_eq!(
        kinds,
        [File, File, File, Tree, File, Symlink, Gitlink, File]
    );
    assert_eq!(entries[0].special, Some(SpecialFile::Gitattributes));
    assert_eq!(entries[1].special, Some(SpecialFile::Gitmodules));
    assert_eq!(entries[2].special, None);
}

#[test]
fn order_duplicates_and_modes_are_checked_as_fsck_does() {
    assert_eq!(
        id(&[("100644", "b"), ("100644", "a")]),
        Some("treeNotSorted")
    );
    assert_eq!(
        id(&[("40000", "a"), ("100644", "a.b")]),
        Some("treeNotSorted"),
        "a directory sorts as 'a/'"
    );
    assert_eq!(
        id(&[("100644", "a"), ("100644", "a")]),
        Some("duplicateEntries")
    );
    assert_eq!(
        id(&[("100644", "a"), ("100644", "a.b"), ("40000", "a")]),
        Some("duplicateEntries"),
        "not next to each other"
    );
    assert_eq!(id(&[("100664", "a")]), Some("badFilemode"));
    assert_eq!(id(&[("100000", "a")]), Some("badFilemode"));
    assert_eq!(id(&[("040000", "a")]), Some("zeroPaddedFilemode"));
    assert_eq!(id(&[("10x644", "a")]), Some("badTree"));
    assert_eq!(id(&[("100644", ".git")]), Some("hasDotgit"));
    assert_eq!(id(&[("40000", ".git\u{200c}")]), Some("hasDotgit"));
    assert_eq!(id(&[("40000", ".g\u{200c}it")]), Some("hasDotgit"));
    assert_eq!(
        id(&[("40000", ".git::$INDEX_ALLOCATION")]),
        Some("hasDotgit")
    );
    assert_eq!(id(&[("120000", ".gitmodules")]), Some("gitmodulesSymlink"));
    assert_eq!(id(&[("40000", ".gitmodules")]), Some("gitmodulesBlob"));
    assert_eq!(
        id(&[("160000", ".gitattributes")]),
        Some("gitattributesBlob")
    );
    assert_eq!(
        id(&[("120000", ".gitattributes")]),
        None,
        "fsck only notes it (info)"
    );
}

#[test]
fn truncated_and_null_entries_are_refused() {
    let whole = tree(&[("100644", "a")]);
    assert_eq!(
        check_tree(&whole[..whole.len() - 1]).err().map(|f| f.id),
        Some("badTree")
    );
    assert_eq!(check_tree(b"100644 a").err().map(|f| f.id), Some("badTree"));
    let mut null = b"100644 a\0".to_vec();
    null.extend_from_slice(&[0; 20]);
    assert_eq!(check_tree(&null).err().map(|f| f.id), Some("nullSha1"));
    assert!(check_tree(b"").unwrap().is_empty(), "the empty tree");
}
