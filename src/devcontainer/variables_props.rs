//! Property tests of `${…}` substitution against the reference CLI's rules
//! (`variableSubstitution.ts` of devcontainers/cli): each match of `\$\{(.*?)\}` (no line
//! terminator inside) split on `:`, `localEnv`/`env` taking the name and a default from the
//! next two parts; `containerEnv` left for the second pass, which reads it the same way.
//! Text without `${` is never changed.

use std::collections::{BTreeMap, HashMap};

use proptest::prelude::*;

use super::*;
use crate::session_settings::substitute_container_env;

fn env() -> HashMap<String, String> {
    [("A", "va"), ("B", ""), ("C", "v:c")]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .into()
}

/// JavaScript's `.`: anything but a line terminator.
fn js_dot(c: char) -> bool {
    !matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// One match's value from its name and arguments: `Some(None)` leaves it verbatim, `None`
/// is where the reference throws.
type Replace<'a> = dyn Fn(&str, &[&str]) -> Option<Option<String>> + 'a;

/// The reference's `value.replace(/\$\{(.*?)\}/g, …)`; `None` where it throws.
fn reference(text: &str, replace: &Replace) -> Option<String> {
    let mut out = String::new();
    let mut i = 0;
    while i < text.len() {
        if text[i..].starts_with("${") {
            let body = &text[i + 2..];
            let end = body.find(|c: char| c == '}' || !js_dot(c));
            if let Some(end) = end.filter(|&e| body[e..].starts_with('}')) {
                let variable = &body[..end];
                let parts: Vec<&str> = variable.split(':').collect();
                let (name, args) = match parts.len() {
                    1 => (variable, &[][..]),
                    _ => (parts[0], &parts[1..]),
                };
                match replace(name, args)? {
                    Some(value) => out.push_str(&value),
                    None => out.push_str(&text[i..i + 2 + end + 1]),
                }
                i += 2 + end + 1;
                continue;
            }
        }
        let c = text[i..].chars().next().unwrap();
        out.push(c);
        i += c.len_utf8();
    }
    Some(out)
}

/// `lookupValue`: the variable, else the default, else empty; no name throws.
fn lookup_value(env: &HashMap<String, String>, args: &[&str]) -> Option<Option<String>> {
    let name = args.first()?;
    let value = env.get(*name).map(String::as_str).or(args.get(1).copied());
    Some(Some(value.unwrap_or_default().to_string()))
}

fn reference_local(text: &str, env: &HashMap<String, String>) -> Option<String> {
    reference(text, &|name, args| match name {
        "env" | "localEnv" => lookup_value(env, args),
        "localWorkspaceFolder" => Some(Some("/home/u/proj".into())),
        "localWorkspaceFolderBasename" => Some(Some("proj".into())),
        "containerWorkspaceFolder" => Some(Some("/workspace".into())),
        "containerWorkspaceFolderBasename" => Some(Some("workspace".into())),
        _ => Some(None),
    })
}

fn reference_container(text: &str, env: &HashMap<String, String>) -> Option<String> {
    reference(text, &|name, args| match name {
        "containerEnv" => lookup_value(env, args),
        _ => Some(None),
    })
}

fn text() -> impl Strategy<Value = String> {
    let pieces = vec![
        "${",
        "}",
        "$",
        "{",
        ":",
        ":",
        "localEnv",
        "env",
        "containerEnv",
        "localWorkspaceFolder",
        "containerWorkspaceFolderBasename",
        "other",
        "A",
        "B",
        "C",
        "D",
        "x",
        " ",
        "\n",
        "\r",
        "\u{2028}",
        "é",
    ];
    proptest::collection::vec(prop::sample::select(pieces), 0..16).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(2048) })]

    #[test]
    fn substitution_agrees_with_the_reference_cli(text in text()) {
        let env = env();
        let host = HostEnv::only(env.clone(), &["*".to_string()]);
        let vars = Variables {
            local_workspace_folder: "/home/u/proj".into(),
            local_workspace_folder_basename: "proj".into(),
            container_workspace_folder: "/workspace".into(),
            devcontainer_id: "abc".into(),
            local_env: &host,
        };
        if let Some(want) = reference_local(&text, &env) {
            prop_assert_eq!(vars.substitute(&text), want, "local pass of {:?}", text);
        }
        if let Some(want) = reference_container(&text, &env) {
            let container: BTreeMap<String, String> = env.clone().into_iter().collect();
            prop_assert_eq!(substitute_container_env(&text, &container), want, "container pass of {:?}", text);
        }
        if !text.contains("${") {
            prop_assert_eq!(substitute_with(&text, |_, _| Some("!".into())), text);
        }
    }
}

/// What the property found: the reference splits every `${…}` on `:` (a name with
/// arguments is still that name, a default ends at the next `:`), and matches none across
/// a line end.
#[test]
fn the_cases_where_the_reference_differed() {
    let host = HostEnv::only(env(), &["*".to_string()]);
    let vars = Variables {
        local_workspace_folder: "/home/u/proj".into(),
        local_workspace_folder_basename: "proj".into(),
        container_workspace_folder: "/workspace".into(),
        devcontainer_id: "abc".into(),
        local_env: &host,
    };
    for (text, want) in [
        ("${localWorkspaceFolder:}", "/home/u/proj"),
        ("${localEnv:NO:a:b}", "a"),
        ("${localEnv:C:d}", "v:c"),
        ("${x\n${localEnv:A}", "${x\nva"),
        ("${localEnv:A\n}", "${localEnv:A\n}"),
        ("${localEnv}", "${localEnv}"),
    ] {
        assert_eq!(vars.substitute(text), want, "{text:?}");
    }
}
