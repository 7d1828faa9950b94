//! Host ↔ container path translation through a container's bind mounts: by path segments
//! (`/workspace2` is not under `/workspace`), longest mount first, unchanged when under none;
//! a host mount root becomes the container directory with a trailing slash.

use std::path::{Component, Path, PathBuf};

use super::container_mount::ContainerMount;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    ToContainer,
    ToHost,
}

pub fn translate(path: &str, mounts: &[ContainerMount], direction: Direction) -> String {
    let target = normalize(path);
    let mut best: Option<(usize, String)> = None;
    for mount in mounts {
        let (from, to) = match direction {
            Direction::ToContainer => (&mount.source, &mount.target),
            Direction::ToHost => (&mount.target, &mount.source),
        };
        let from = normalize(from);
        if let Ok(rest) = target.strip_prefix(&from) {
            let depth = from.components().count();
            if best.as_ref().is_none_or(|(d, _)| depth > *d) {
                let root = rest.as_os_str().is_empty();
                let base = normalize(to);
                let mut mapped = match root {
                    true => base.to_string_lossy().into_owned(),
                    false => base.join(rest).to_string_lossy().into_owned(),
                };
                // Lace's runtime gives a mount root as a directory: `/workspace/`.
                if root && direction == Direction::ToContainer && !mapped.ends_with('/') {
                    mapped.push('/');
                }
                best = Some((depth, mapped));
            }
        }
    }
    best.map(|(_, p)| p).unwrap_or_else(|| path.to_string())
}

/// Lexical normalisation: removes `.` and empty segments and applies `..` without touching
/// the file system (a container path cannot be resolved on the host).
fn normalize(path: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for component in Path::new(path).components() {
        match component {
            Component::ParentDir => {
                if out.parent().is_some() {
                    out.pop();
                }
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mounts() -> Vec<ContainerMount> {
        vec![
            ContainerMount::bind("/home/u/proj", "/workspace", false),
            ContainerMount::bind("/home/u/cache", "/workspace/cache", true),
        ]
    }

    #[test]
    fn translates_by_segments_longest_first() {
        let m = mounts();
        assert_eq!(
            translate("/home/u/proj/src/a.ts", &m, Direction::ToContainer),
            "/workspace/src/a.ts"
        );
        assert_eq!(
            translate("/workspace/cache/x", &m, Direction::ToHost),
            "/home/u/cache/x"
        );
        assert_eq!(
            translate("/workspace", &m, Direction::ToHost),
            "/home/u/proj"
        );
        assert_eq!(
            translate("/workspace/", &m, Direction::ToHost),
            "/home/u/proj"
        );
        for root in ["/home/u/proj", "/home/u/proj/"] {
            assert_eq!(translate(root, &m, Direction::ToContainer), "/workspace/");
        }
    }

    #[test]
    fn sibling_prefixes_are_not_mounts() {
        let m = mounts();
        assert_eq!(
            translate("/workspace2/x", &m, Direction::ToHost),
            "/workspace2/x"
        );
        assert_eq!(
            translate("/home/u/project/x", &m, Direction::ToContainer),
            "/home/u/project/x"
        );
    }

    #[test]
    fn dot_dot_cannot_escape_into_a_mount_lexically() {
        let m = mounts();
        assert_eq!(
            translate("/workspace/../etc/passwd", &m, Direction::ToHost),
            "/workspace/../etc/passwd"
        );
        assert_eq!(
            translate("/workspace/a/../b", &m, Direction::ToHost),
            "/home/u/proj/b"
        );
    }
}
