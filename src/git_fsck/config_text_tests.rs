use super::*;

fn entries(text: &str) -> Vec<(String, Option<String>, String, Option<String>)> {
    let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    parse_config(text.as_bytes())
        .unwrap()
        .into_iter()
        .map(|e| {
            (
                s(&e.section),
                e.subsection.as_deref().map(s),
                s(&e.key),
                e.value.as_deref().map(s),
            )
        })
        .collect()
}

fn entry(
    section: &str,
    sub: Option<&str>,
    key: &str,
    value: Option<&str>,
) -> (String, Option<String>, String, Option<String>) {
    (
        section.into(),
        sub.map(Into::into),
        key.into(),
        value.map(Into::into),
    )
}

#[test]
fn sections_keys_and_values_read_as_git_reads_them() {
    let text = "\u{feff}# c\n[Submodule \"Lib/A\\\"b\"]\n\tPath = lib/a  ; trailing\n  url = \" -x \"y\\tz\n[submodule.Old] update\n[core] k = a\\\n b # c\r\n";
    assert_eq!(
        entries(text),
        [
            entry("submodule", Some("Lib/A\"b"), "path", Some("lib/a")),
            entry("submodule", Some("Lib/A\"b"), "url", Some(" -x y\tz")),
            entry("submodule", Some("old"), "update", None),
            entry("core", None, "k", Some("a b")),
        ]
    );
}

#[test]
fn text_git_refuses_is_refused() {
    for text in [
        "k = v\n",
        "[s\n",
        "[s \"x]\n",
        "[s \"x\" ]\n",
        "[s] k = \"open\n",
        "[s] k = bad\\q\n",
        "[s] k# = v\n",
        "[s] 1k = v\n",
        "[] k = v\n",
        "[s!] k = v\n",
    ] {
        assert!(parse_config(text.as_bytes()).is_err(), "{text:?}");
    }
    assert_eq!(parse_config(b"").unwrap(), vec![]);
}
