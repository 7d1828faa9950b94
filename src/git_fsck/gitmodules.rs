//! A `.gitmodules` blob as git's fsck checks it (the CVE-2018-11235 family): every
//! submodule's name free of `..` components, its URL one git would use
//! (`submodule_url`), its path not an option, its `update` not a `!command`. A blob git's
//! config parser could not read is refused too (fsck only notes it; nothing legitimate
//! writes one).

use super::config_text::parse_config;
use super::finding::Finding;
use super::submodule_url;

pub fn check(data: &[u8]) -> Result<(), Finding> {
    let entries = parse_config(data).map_err(|at| {
        Finding::new(
            "gitmodulesParse",
            format!("could not parse the .gitmodules blob (line {})", at.line),
        )
    })?;
    for entry in entries {
        let Some(name) = entry
            .subsection
            .as_deref()
            .filter(|_| entry.section == b"submodule")
        else {
            continue;
        };
        let shown = String::from_utf8_lossy(name);
        if gix_validate::submodule::name(name.into()).is_err() {
            return Err(Finding::new(
                "gitmodulesName",
                format!("disallowed submodule name: {shown}"),
            ));
        }
        let Some(value) = entry.value.as_deref() else {
            continue;
        };
        match entry.key.as_slice() {
            b"url" => {
                if let Some(why) = submodule_url::refusal(value) {
                    return Err(Finding::new(
                        "gitmodulesUrl",
                        format!("disallowed submodule url for {shown}: {why}"),
                    ));
                }
            }
            b"path" if value.first() == Some(&b'-') => {
                return Err(Finding::new(
                    "gitmodulesPath",
                    format!("disallowed submodule path for {shown}"),
                ));
            }
            b"update" if value.first() == Some(&b'!') => {
                return Err(Finding::new(
                    "gitmodulesUpdate",
                    format!("disallowed submodule update setting for {shown}"),
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(text: &str) -> Option<&'static str> {
        check(text.as_bytes()).err().map(|f| f.id)
    }

    #[test]
    fn hostile_submodules_are_refused() {
        assert_eq!(
            id("[submodule \"lib\"]\n\tpath = lib\n\turl = ../lib.git\n\tupdate = rebase\n"),
            None
        );
        assert_eq!(
            id("[submodule \"../../modules/x\"]\n\tpath = x\n"),
            Some("gitmodulesName")
        );
        assert_eq!(
            id("[submodule \"a\\\\..\\\\b\"]\n\tpath = x\n"),
            Some("gitmodulesName")
        );
        assert_eq!(
            id("[submodule \"a\"]\n\turl = --upload-pack=touch /tmp/x\n"),
            Some("gitmodulesUrl")
        );
        assert_eq!(
            id("[submodule \"a\"]\n\tpath = -x\n"),
            Some("gitmodulesPath")
        );
        assert_eq!(
            id("[submodule \"a\"]\n\tupdate = !sh -c x\n"),
            Some("gitmodulesUpdate")
        );
        assert_eq!(id("[submodule \"a\"\n"), Some("gitmodulesParse"));
        assert_eq!(id("[core]\n\turl = -x\n"), None, "only submodule sections");
    }
}
