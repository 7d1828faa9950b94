//! Container paths as strings: resolved against a working directory and normalised
//! lexically, the way Node's `path.resolve` does before the kernel sees them.

/// Linux's limits: a name of at most `NAME_MAX` bytes, a path shorter than `PATH_MAX`.
const NAME_MAX: usize = 255;
const PATH_MAX: usize = 4096;

/// Whether the kernel would refuse `path` with `ENAMETOOLONG` (checked before an engine
/// request, whose own error would not say so).
pub fn too_long(path: &str) -> bool {
    path.len() >= PATH_MAX || path.split('/').any(|name| name.len() > NAME_MAX)
}

/// `path` made absolute against `cwd`, with `.`, `..` and repeated slashes folded.
pub fn resolve(cwd: &str, path: &str) -> String {
    let joined = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{cwd}/{path}")
    };
    normalize(&joined)
}

pub fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    format!("/{}", parts.join("/"))
}

/// `base` joined with a relative `rest` (which may be empty).
pub fn join(base: &str, rest: &str) -> String {
    match (base, rest) {
        (_, "") => base.to_string(),
        ("/", _) => format!("/{rest}"),
        _ => format!("{base}/{rest}"),
    }
}

/// `(parent, file name)`; the root has no parent.
pub fn split(path: &str) -> Option<(String, String)> {
    let path = normalize(path);
    let pos = path.rfind('/')?;
    let name = &path[pos + 1..];
    if name.is_empty() {
        return None;
    }
    let parent = if pos == 0 { "/" } else { &path[..pos] };
    Some((parent.to_string(), name.to_string()))
}

/// The components of `path` below `base`, when `path` is `base` or under it (by segments).
pub fn strip_base<'a>(path: &'a str, base: &str) -> Option<&'a str> {
    if base == "/" {
        return Some(path.trim_start_matches('/'));
    }
    let rest = path.strip_prefix(base)?;
    if rest.is_empty() {
        Some("")
    } else {
        rest.strip_prefix('/')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_over_255_bytes_and_paths_of_4096_are_too_long() {
        assert!(!too_long(&format!("/tmp/{}", "x".repeat(255))));
        assert!(too_long(&format!("/tmp/{}", "x".repeat(256))));
        assert!(too_long(&"/a".repeat(2048)));
    }

    #[test]
    fn resolves_like_path_resolve() {
        assert_eq!(resolve("/work", "a/b"), "/work/a/b");
        assert_eq!(resolve("/work", "../etc//x/."), "/etc/x");
        assert_eq!(resolve("/work", "/abs"), "/abs");
        assert_eq!(resolve("/", "../../.."), "/");
    }

    #[test]
    fn splits_and_strips_by_segments() {
        assert_eq!(split("/a/b"), Some(("/a".into(), "b".into())));
        assert_eq!(split("/a"), Some(("/".into(), "a".into())));
        assert_eq!(split("/"), None);
        assert_eq!(strip_base("/workspace/x/y", "/workspace"), Some("x/y"));
        assert_eq!(strip_base("/workspace", "/workspace"), Some(""));
        assert_eq!(strip_base("/workspace2/x", "/workspace"), None);
        assert_eq!(strip_base("/x", "/"), Some("x"));
    }
}

#[cfg(test)]
#[path = "container_path_props.rs"]
mod props;
