//! Property tests of container paths: a resolved path is absolute and normal (no `.`, `..`
//! or empty component survives), resolving is idempotent, a relative path that never
//! climbs above its start stays below the working directory, and `join`, `split` and
//! `strip_base` undo one another.

use proptest::prelude::*;

use super::*;

fn component() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => "[a-c]{1,3}",
        1 => Just(".".to_string()),
        1 => Just("..".to_string()),
        1 => Just(String::new()),
        1 => Just("...".to_string()),
        1 => Just(".a".to_string()),
    ]
}

/// A path of those components; absolute when it starts with `/`.
fn any_path() -> impl Strategy<Value = String> {
    (any::<bool>(), proptest::collection::vec(component(), 0..8)).prop_map(|(abs, parts)| {
        let joined = parts.join("/");
        if abs {
            format!("/{joined}")
        } else {
            joined
        }
    })
}

fn is_normal(path: &str) -> bool {
    path == "/"
        || (path.starts_with('/') && path[1..].split('/').all(|c| !matches!(c, "" | "." | "..")))
}

/// Relative components that never go above where they start.
fn descending() -> impl Strategy<Value = String> {
    proptest::collection::vec(component(), 0..8).prop_map(|parts| {
        let mut depth = 0usize;
        let kept: Vec<String> = parts
            .into_iter()
            .filter(|c| match c.as_str() {
                ".." if depth == 0 => false,
                ".." => {
                    depth -= 1;
                    true
                }
                "" | "." => true,
                _ => {
                    depth += 1;
                    true
                }
            })
            .collect();
        kept.join("/").trim_start_matches('/').to_string()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(1024) })]

    #[test]
    fn resolved_paths_are_absolute_normal_and_fixed_points(cwd in any_path(), path in any_path()) {
        let resolved = resolve(&cwd, &path);
        prop_assert!(is_normal(&resolved), "{:?}", resolved);
        prop_assert_eq!(&normalize(&resolved), &resolved);
        prop_assert_eq!(&resolve(&cwd, &resolved), &resolved);
        prop_assert_eq!(&resolve("/elsewhere", &resolved), &resolved);
        prop_assert_eq!(normalize(&normalize(&path)), normalize(&path));
    }

    #[test]
    fn a_path_that_never_climbs_stays_below_the_working_directory(
        cwd in any_path(),
        path in descending(),
    ) {
        let base = normalize(&cwd);
        let resolved = resolve(&base, &path);
        let rest = strip_base(&resolved, &base);
        prop_assert!(rest.is_some(), "{:?} left {:?}", resolved, base);
        prop_assert_eq!(join(&base, rest.unwrap()), resolved);
    }

    #[test]
    fn split_and_join_undo_each_other(path in any_path()) {
        let normal = normalize(&path);
        match split(&path) {
            None => prop_assert_eq!(normal, "/"),
            Some((parent, name)) => {
                prop_assert!(is_normal(&parent));
                prop_assert!(!name.is_empty() && !name.contains('/'));
                prop_assert_eq!(join(&parent, &name), normal);
            }
        }
    }
}
