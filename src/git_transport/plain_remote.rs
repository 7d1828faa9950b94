//! A remote whose URL is exactly the one given: created with libgit2's
//! `GIT_REMOTE_CREATE_SKIP_INSTEADOF`, so that no `url.*.insteadOf` rewrite (the
//! repository's, the user's or the system's config) turns it into another one. git2 does
//! not bind `git_remote_create_with_opts`; it is declared here against the libgit2 that
//! libgit2-sys links.

use std::ffi::{c_char, c_int, c_uint, CString};

use git2::{Binding, Remote, Repository};
use libgit2_sys as raw;

#[repr(C)]
struct CreateOptions {
    version: c_uint,
    repository: *mut raw::git_repository,
    name: *const c_char,
    fetchspec: *const c_char,
    flags: c_uint,
}

const CREATE_OPTIONS_VERSION: c_uint = 1;
const SKIP_INSTEADOF: c_uint = 1 << 0;

extern "C" {
    fn git_remote_create_with_opts(
        out: *mut *mut raw::git_remote,
        url: *const c_char,
        opts: *const CreateOptions,
    ) -> c_int;
}

/// A remote of `repo` for `url`, named `name` (written to the repository's config) or
/// anonymous, with no `insteadOf` applied.
pub fn plain_remote<'r>(
    repo: &'r Repository,
    name: Option<&str>,
    url: &str,
) -> Result<Remote<'r>, git2::Error> {
    let url = CString::new(url)?;
    let name = name.map(CString::new).transpose()?;
    let opts = CreateOptions {
        version: CREATE_OPTIONS_VERSION,
        repository: repo.raw(),
        name: name.as_ref().map_or(std::ptr::null(), |n| n.as_ptr()),
        fetchspec: std::ptr::null(),
        flags: SKIP_INSTEADOF,
    };
    let mut out = std::ptr::null_mut();
    // SAFETY: valid NUL-terminated strings and a live repository, borrowed for the call;
    // the options struct has libgit2's layout for version 1.
    let rc = unsafe { git_remote_create_with_opts(&mut out, url.as_ptr(), &opts) };
    if rc < 0 {
        return Err(git2::Error::last_error(rc));
    }
    // SAFETY: a remote libgit2 just made for `repo`; `Remote` frees it once.
    Ok(unsafe { Remote::from_raw(out) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_instead_of_rewrites_the_url() {
        let dir = std::env::temp_dir().join(format!("ci-plain-{}", uuid::Uuid::new_v4()));
        let repo = Repository::init_bare(&dir).unwrap();
        repo.config()
            .unwrap()
            .set_str(
                "url.https://elsewhere.example/.insteadOf",
                "https://here.example/",
            )
            .unwrap();
        let rewritten = repo.remote_anonymous("https://here.example/r.git").unwrap();
        assert_eq!(rewritten.url(), Ok("https://elsewhere.example/r.git"));
        let plain = plain_remote(&repo, None, "https://here.example/r.git").unwrap();
        assert_eq!(plain.url(), Ok("https://here.example/r.git"));
        let named = plain_remote(&repo, Some("origin"), "https://here.example/r.git").unwrap();
        assert_eq!(named.name(), Ok(Some("origin")));
        assert_eq!(named.url(), Ok("https://here.example/r.git"));
        let config = repo.config().unwrap().snapshot().unwrap();
        assert_eq!(
            config.get_str("remote.origin.url"),
            Ok("https://here.example/r.git")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
