//! The images a Dockerfile builds `FROM`, read as the builder reads them: instructions
//! joined over escaped line ends, comments skipped, the global `ARG`s (before the first
//! `FROM`, overridden by the build's args) substituted, `scratch` and earlier stages
//! left out. What cannot be resolved is left to the builder.

use std::collections::BTreeMap;

/// The Dockerfile's instructions, each on one line.
fn instructions(text: &str) -> Vec<String> {
    let mut escape = '\\';
    let mut lines = text.lines().peekable();
    // A parser directive before anything else may change the escape character.
    while let Some(line) = lines.peek() {
        let Some(directive) = line.trim().strip_prefix('#') else {
            break;
        };
        let Some((key, value)) = directive.split_once('=') else {
            break;
        };
        if key.trim().eq_ignore_ascii_case("escape") && value.trim() == "`" {
            escape = '`';
        }
        lines.next();
    }
    let mut out = Vec::new();
    let mut current = String::new();
    for line in lines {
        let trimmed = line.trim_start();
        if trimmed.starts_with('#') {
            continue;
        }
        let body = line.trim_end();
        match body.strip_suffix(escape) {
            Some(head) => {
                current.push_str(head);
                current.push(' ');
            }
            None => {
                current.push_str(body);
                if !current.trim().is_empty() {
                    out.push(current.trim().to_string());
                }
                current.clear();
            }
        }
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_string());
    }
    out
}

/// `$NAME`, `${NAME}` and `${NAME:-default}` from `args` (unset: empty); `None` when
/// something else is left (the builder decides then).
fn substitute(word: &str, args: &BTreeMap<String, String>) -> Option<String> {
    let mut out = String::new();
    let mut rest = word;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (expr, used) = match after.strip_prefix('{') {
            Some(braced) => {
                let end = braced.find('}')?;
                (&braced[..end], end + 2)
            }
            None => {
                let end = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (&after[..end], end)
            }
        };
        let (name, default) = match expr.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (expr, None),
        };
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return None;
        }
        match (args.get(name).filter(|v| !v.is_empty()), default) {
            (Some(value), _) => out.push_str(value),
            (None, Some(default)) if !default.contains('$') => out.push_str(default),
            (None, _) => out.push_str(args.get(name).map_or("", String::as_str)),
        }
        rest = &after[used..];
    }
    out.push_str(rest);
    Some(out)
}

/// The `ARG`s of one instruction (`ARG A=1 B`), defaults unquoted.
fn read_args(
    rest: &str,
    build_args: &BTreeMap<String, String>,
    into: &mut BTreeMap<String, String>,
) {
    for word in rest.split_whitespace() {
        let (name, default) = match word.split_once('=') {
            Some((name, value)) => (name, Some(value.trim_matches(['"', '\'']))),
            None => (word, None),
        };
        let value = build_args
            .get(name)
            .cloned()
            .or_else(|| default.and_then(|d| substitute(d, into)));
        if let Some(value) = value {
            into.insert(name.to_string(), value);
        }
    }
}

/// The base images of `dockerfile`, in order, each once.
pub fn base_images(dockerfile: &str, build_args: &BTreeMap<String, String>) -> Vec<String> {
    let mut args = BTreeMap::new();
    let mut stages: Vec<String> = Vec::new();
    let mut bases: Vec<String> = Vec::new();
    let mut seen_from = false;
    for instruction in instructions(dockerfile) {
        let (keyword, rest) = instruction
            .split_once(char::is_whitespace)
            .unwrap_or((instruction.as_str(), ""));
        if keyword.eq_ignore_ascii_case("ARG") && !seen_from {
            read_args(rest, build_args, &mut args);
            continue;
        }
        if !keyword.eq_ignore_ascii_case("FROM") {
            continue;
        }
        seen_from = true;
        let words: Vec<&str> = rest
            .split_whitespace()
            .filter(|w| !w.starts_with("--"))
            .collect();
        let Some(word) = words.first() else {
            continue;
        };
        let image = substitute(word, &args).filter(|image| {
            !image.is_empty()
                && !image.eq_ignore_ascii_case("scratch")
                && !stages.contains(&image.to_ascii_lowercase())
        });
        if let [_, as_word, stage, ..] = words.as_slice() {
            if as_word.eq_ignore_ascii_case("AS") {
                stages.push(stage.to_ascii_lowercase());
            }
        }
        if let Some(image) = image.filter(|image| !bases.contains(image)) {
            bases.push(image);
        }
    }
    bases
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bases_come_from_every_stage_with_global_args_and_no_stage_names() {
        let file = "# escape=\\\n# a comment\nARG BASE=debian:12\nARG TAG\nARG UNUSED=\"x\"\n\
            FROM --platform=$BUILDPLATFORM ${BASE} AS build\nRUN make \\\n  all\n\
            FROM build AS again\nFROM registry.example:5000/tools:${TAG:-1.0} \\\n  AS tools\n\
            FROM scratch\nFROM $BASE\nARG LATE=nope\nFROM ${LATE}\nFROM $(weird)\n";
        assert_eq!(
            base_images(file, &BTreeMap::new()),
            ["debian:12", "registry.example:5000/tools:1.0"]
        );
        let args = BTreeMap::from([
            ("BASE".to_string(), "node:20".to_string()),
            ("TAG".to_string(), "2".to_string()),
        ]);
        assert_eq!(
            base_images(file, &args),
            ["node:20", "registry.example:5000/tools:2"]
        );
        let lower = "from alpine\nfrom alpine as x\nfrom X";
        assert_eq!(base_images(lower, &BTreeMap::new()), ["alpine"]);
    }
}
