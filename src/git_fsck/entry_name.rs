//! The rules for one tree entry's name: none that a checkout on any file system would turn
//! into a path outside the entry's directory or into the repository's own `.git` (every
//! spelling git refuses: case and HFS+ ignorable code points, and bytes that are not UTF-8
//! after it, through `dot_names`; trailing dots and spaces, `git~1`, NTFS streams, through
//! gix-validate), no `.gitmodules` that is a symlink, no separator (`/`, and `\`, a
//! separator on Windows), no name longer than git accepts.

use gix_validate::path::component::{self, Mode, Options};

use super::dot_names::{is_hfs_dot, is_ntfs_dot};
use super::finding::Finding;

/// git's `fsck.largePathname` bound on one entry's name.
const MAX_NAME_BYTES: usize = 4096;

/// The dot files git reads from a checkout, whose blobs fsck parses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpecialFile {
    Gitmodules,
    Gitattributes,
}

/// Which of the parsed dot files `name` is on some file system.
pub fn special_file(name: &[u8]) -> Option<SpecialFile> {
    let is = |needle, short| is_hfs_dot(name, needle) || is_ntfs_dot(name, needle, short);
    if is("gitmodules", "gi7eba") {
        Some(SpecialFile::Gitmodules)
    } else if is("gitattributes", "gi7d29") {
        Some(SpecialFile::Gitattributes)
    } else {
        None
    }
}

/// Refuses a name git's fsck refuses (as `fsck --strict`, warnings included).
pub fn check_name(name: &[u8], symlink: bool) -> Result<(), Finding> {
    let shown = || format!("{:?}", String::from_utf8_lossy(name));
    if name.len() > MAX_NAME_BYTES {
        return Err(Finding::new(
            "largePathname",
            format!("an entry name of {} bytes", name.len()),
        ));
    }
    if name.contains(&b'\\') {
        return Err(Finding::new(
            "fullPathname",
            format!("entry {} holds '\\', a path separator on Windows", shown()),
        ));
    }
    if is_hfs_dot(name, "git") {
        return Err(Finding::new(
            "hasDotgit",
            format!("entry {} is .git on HFS+", shown()),
        ));
    }
    if symlink && is_hfs_dot(name, "gitmodules") {
        return Err(Finding::new(
            "gitmodulesSymlink",
            format!("entry {} is .gitmodules on HFS+, a symlink", shown()),
        ));
    }
    let options = Options {
        protect_windows: false,
        protect_hfs: false,
        protect_ntfs: true,
    };
    let mode = symlink.then_some(Mode::Symlink);
    let Err(err) = gix_validate::path::component(name.into(), mode, options) else {
        return Ok(());
    };
    let id = match err {
        component::Error::Empty => "emptyName",
        component::Error::PathSeparator => "fullPathname",
        component::Error::Relative if name == b"." => "hasDot",
        component::Error::Relative => "hasDotdot",
        component::Error::DotGitDir => "hasDotgit",
        component::Error::SymlinkedGitModules => "gitmodulesSymlink",
        _ => "badTree",
    };
    Err(Finding::new(id, format!("entry {}: {err}", shown())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(name: &str, symlink: bool) -> Option<&'static str> {
        check_name(name.as_bytes(), symlink).err().map(|f| f.id)
    }

    #[test]
    fn every_spelling_of_dot_git_is_refused() {
        for name in [
            ".git",
            ".GIT",
            ".Git",
            ".git.",
            ".git. . ",
            "git~1",
            "GIT~1",
            ".git::$INDEX_ALLOCATION",
            ".git\u{200c}",
            ".g\u{200c}it",
            "\u{200e}.git",
            ".gi\u{feff}t",
        ] {
            assert_eq!(refused(name, false), Some("hasDotgit"), "{name:?}");
        }
        for name in [".gitignore", ".github", "git", ".gitx", "a.git"] {
            assert_eq!(refused(name, false), None, "{name:?}");
        }
    }

    #[test]
    fn dot_names_followed_by_bytes_that_are_not_utf8_are_what_git_takes_them_for() {
        let refused = |name: &[u8], symlink| check_name(name, symlink).err().map(|f| f.id);
        for name in [
            &b".git\xff"[..],
            b".GIT\xff",
            b".git\xe2\x80",
            b".git\xef\xbf\xbf",
            b"\xe2\x80\x8c.git\xff",
        ] {
            assert_eq!(refused(name, false), Some("hasDotgit"), "{name:?}");
        }
        assert_eq!(refused(b".gitmodules\xff", true), Some("gitmodulesSymlink"));
        for name in [
            &b".gitx"[..],
            b"x\xff",
            b"\xff.git",
            b".gi\xfft",
            b".git\xef\xbf\xbd",
        ] {
            assert_eq!(refused(name, false), None, "{name:?}");
        }
        for name in [
            &b".gitignore\xff"[..],
            b".mailmap\xff",
            b".gitattributes\xff",
        ] {
            assert_eq!(refused(name, true), None, "git only notes these: {name:?}");
        }
        assert_eq!(
            special_file(b".gitmodules\xff"),
            Some(SpecialFile::Gitmodules)
        );
        assert_eq!(
            special_file(b".gitattributes\xef\xbf\xbe"),
            Some(SpecialFile::Gitattributes)
        );
        assert_eq!(special_file(b".gitmodules\xef\xbf\xbd"), None);
    }

    #[test]
    fn separators_dots_and_symlinked_gitmodules_are_refused() {
        assert_eq!(refused("", false), Some("emptyName"));
        assert_eq!(refused(".", false), Some("hasDot"));
        assert_eq!(refused("..", false), Some("hasDotdot"));
        assert_eq!(refused("a/b", false), Some("fullPathname"));
        assert_eq!(refused("a\\b", false), Some("fullPathname"));
        assert_eq!(refused(&"x".repeat(4097), false), Some("largePathname"));
        for name in [
            ".gitmodules",
            ".GITMODULES",
            ".gitmodules.",
            "gitmod~1",
            ".git\u{200c}modules",
        ] {
            assert_eq!(refused(name, true), Some("gitmodulesSymlink"), "{name:?}");
            assert_eq!(refused(name, false), None, "{name:?}");
        }
        assert_eq!(refused(".gitattributes", true), None);
    }

    #[test]
    fn special_files_are_found_in_every_spelling() {
        assert_eq!(special_file(b".gitmodules"), Some(SpecialFile::Gitmodules));
        assert_eq!(
            special_file(".GitModules\u{200d}".as_bytes()),
            Some(SpecialFile::Gitmodules)
        );
        assert_eq!(special_file(b"gi7eba~1"), Some(SpecialFile::Gitmodules));
        assert_eq!(
            special_file(b".gitattributes::$DATA"),
            Some(SpecialFile::Gitattributes)
        );
        assert_eq!(special_file(b"gitatt~2"), Some(SpecialFile::Gitattributes));
        assert_eq!(special_file(b".gitignore"), None);
    }
}
