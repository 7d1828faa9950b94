//! Property tests of `resolve_user` and the account-file parsers: hostile bytes never
//! panic, numeric specs are taken as written, and a name picks the line the engine would
//! (the first whose name or uid matches), each line read as glibc's `fgetpwent_r` reads it.

#[cfg(all(target_os = "linux", target_env = "gnu"))]
use std::ffi::{CStr, CString};

use futures_util::FutureExt;
use proptest::prelude::*;

use super::*;
#[cfg(all(target_os = "linux", target_env = "gnu"))]
use crate::scratch_dir::Scratch;

struct Files {
    passwd: Option<Vec<u8>>,
    group: Option<Vec<u8>>,
}

impl AccountReader for Files {
    fn container(&self) -> &str {
        "c"
    }

    async fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
        Ok(match path {
            "/etc/passwd" => self.passwd.clone(),
            "/etc/group" => self.group.clone(),
            _ => None,
        })
    }
}

fn resolve(files: &Files, spec: &str) -> Result<UserIds> {
    resolve_user(files, spec)
        .now_or_never()
        .expect("the reader never waits")
}

/// `(name, uid, gid, home)` of every entry glibc reads from `text`.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn glibc_passwd(text: &str) -> Vec<(String, u32, u32, String)> {
    let scratch = Scratch::new("passwd-props");
    let path = scratch.path("passwd");
    std::fs::write(&path, text).unwrap();
    let c_path = CString::new(path.to_str().unwrap()).unwrap();
    let mut out = Vec::new();
    // SAFETY: NUL-terminated strings; the buffer outlives each entry read into it, and the
    // stream is closed once.
    unsafe {
        let file = libc::fopen(c_path.as_ptr(), c"r".as_ptr());
        assert!(!file.is_null());
        let mut buf = vec![0 as libc::c_char; 1 << 16];
        loop {
            let mut entry: libc::passwd = std::mem::zeroed();
            let mut found: *mut libc::passwd = std::ptr::null_mut();
            let rc = libc::fgetpwent_r(file, &mut entry, buf.as_mut_ptr(), buf.len(), &mut found);
            if rc != 0 || found.is_null() {
                break;
            }
            let text = |p: *const libc::c_char| CStr::from_ptr(p).to_string_lossy().into_owned();
            out.push((
                text(entry.pw_name),
                entry.pw_uid,
                entry.pw_gid,
                text(entry.pw_dir),
            ));
        }
        libc::fclose(file);
    }
    out
}

fn passwd_line() -> impl Strategy<Value = String> {
    ("[a-c0-9]{1,2}", 0u32..12, 0u32..12, "/[a-z]{0,3}")
        .prop_map(|(name, uid, gid, home)| format!("{name}:x:{uid}:{gid}:gecos:{home}:/bin/sh"))
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(256) })]

    #[test]
    fn hostile_account_files_never_panic(
        passwd in proptest::collection::vec(any::<u8>(), 0..200),
        group in proptest::collection::vec(any::<u8>(), 0..200),
        spec in "[a-z0-9:\\x00\n]{0,8}",
    ) {
        for entry in parse_passwd(&String::from_utf8_lossy(&passwd)) {
            prop_assert!(!entry.name.contains(':') && !entry.name.contains('\n'));
        }
        let files = Files { passwd: Some(passwd), group: Some(group) };
        if let Err(e) = resolve(&files, &spec) {
            prop_assert_eq!(e.code, ErrorCode::InvalidArgument);
        }
    }

    #[test]
    fn a_numeric_spec_is_taken_as_written(
        uid in any::<u32>(),
        gid in any::<u32>(),
        lines in proptest::collection::vec(passwd_line(), 0..6),
    ) {
        let files = Files { passwd: Some(lines.join("\n").into_bytes()), group: None };
        let ids = resolve(&files, &format!("{uid}:{gid}")).unwrap();
        prop_assert_eq!((ids.uid, ids.gid), (uid, gid));
    }

    #[test]
    fn a_name_holding_a_colon_nul_or_newline_is_refused(
        head in "[a-c]{1,2}",
        odd in "[:\\x00\n]",
        tail in "[a-c]{0,2}",
        lines in proptest::collection::vec(passwd_line(), 0..6),
    ) {
        let name = format!("{head}{odd}{tail}");
        let mut passwd = lines.join("\n");
        passwd.push_str(&format!("\n{name}:x:5:5::/h:/bin/sh\n"));
        let files = Files {
            passwd: Some(passwd.into_bytes()),
            group: Some(format!("{name}:x:5:\n").into_bytes()),
        };
        prop_assert!(resolve(&files, &name).is_err(), "{:?} resolved", name);
        let as_group = format!("root:{name}");
        prop_assert!(resolve(&files, &as_group).is_err(), "{:?} resolved", as_group);
    }

    // Against glibc's own reader: on Linux with glibc only.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn a_user_resolves_to_the_first_line_matching_its_name_or_uid(
        lines in proptest::collection::vec(passwd_line(), 1..8),
        pick in any::<prop::sample::Index>(),
        by_uid in any::<bool>(),
    ) {
        let text = lines.join("\n") + "\n";
        let entries = glibc_passwd(&text);
        prop_assert_eq!(entries.len(), lines.len());
        let chosen = &entries[pick.index(entries.len())];
        let spec = if by_uid { chosen.1.to_string() } else { chosen.0.clone() };
        prop_assume!(spec != "root" && spec != "0");
        let number = spec.parse::<u32>().ok();
        let first = entries
            .iter()
            .find(|e| e.0 == spec || Some(e.1) == number)
            .unwrap();
        let files = Files { passwd: Some(text.into_bytes()), group: None };
        let ids = resolve(&files, &spec).unwrap();
        prop_assert_eq!(ids.uid, number.unwrap_or(first.1));
        prop_assert_eq!(ids.gid, first.2);
        prop_assert_eq!(ids.home.as_deref(), Some(first.3.as_str()));
    }
}

#[test]
fn a_name_with_a_nul_is_refused_though_a_hostile_passwd_holds_it() {
    let files = Files {
        passwd: Some(b"a\0b:x:5:5::/h:/bin/sh\n".to_vec()),
        group: None,
    };
    assert_eq!(
        resolve(&files, "a\0b").unwrap_err().code,
        ErrorCode::InvalidArgument
    );
}
