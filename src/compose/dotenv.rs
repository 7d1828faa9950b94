//! `.env` and `env_file` files as compose reads them: `KEY=VALUE` lines, `export ` before a
//! key, `#` comments, values in single quotes taken as written, in double quotes with `\n`,
//! `\t`, `\"` and `\\` escapes (and over several lines), unquoted ones trimmed and cut at ` #`.
//! Unquoted and double-quoted values are interpolated by the caller; a line with a key alone
//! takes the key's value from the caller's environment.

/// One entry: its key, its value as written (unquoted, escapes applied), and whether the
/// value is to be interpolated (`None`: a key without `=`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DotenvEntry {
    pub key: String,
    pub value: Option<String>,
    pub interpolate: bool,
}

fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// Entries in file order; `Err` names the line that does not parse.
pub fn parse_dotenv(text: &str) -> Result<Vec<DotenvEntry>, String> {
    let mut entries = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        let line = line.trim_start();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").map_or(line, str::trim_start);
        let (key, rest) = match line.find('=') {
            Some(at) => (line[..at].trim(), Some(&line[at + 1..])),
            None => (line.trim(), None),
        };
        if !valid_key(key) {
            return Err(format!("line {}: '{key}' is not a variable name", n + 1));
        }
        let Some(rest) = rest else {
            entries.push(DotenvEntry {
                key: key.to_string(),
                value: None,
                interpolate: false,
            });
            continue;
        };
        let rest = rest.trim_start();
        let (value, interpolate) = if let Some(quoted) = rest.strip_prefix('\'') {
            let end = quoted
                .find('\'')
                .ok_or_else(|| format!("line {}: unterminated single quote", n + 1))?;
            (quoted[..end].to_string(), false)
        } else if let Some(quoted) = rest.strip_prefix('"') {
            let mut text = quoted.to_string();
            let value = loop {
                if let Some(value) = double_quoted(&text) {
                    break value;
                }
                let (_, next) = lines
                    .next()
                    .ok_or_else(|| format!("line {}: unterminated double quote", n + 1))?;
                text.push('\n');
                text.push_str(next);
            };
            (value, true)
        } else {
            let cut = rest.find(" #").map_or(rest, |at| &rest[..at]);
            (cut.trim().to_string(), true)
        };
        entries.push(DotenvEntry {
            key: key.to_string(),
            value: Some(value),
            interpolate,
        });
    }
    Ok(entries)
}

/// The value up to its closing quote, escapes applied; `None` when the quote is not closed.
fn double_quoted(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                other @ ('"' | '\\') => out.push(other),
                other => {
                    out.push('\\');
                    out.push(other);
                }
            },
            c => out.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: &str, value: Option<&str>, interpolate: bool) -> DotenvEntry {
        DotenvEntry {
            key: key.into(),
            value: value.map(Into::into),
            interpolate,
        }
    }

    #[test]
    fn keys_values_quotes_and_comments() {
        let text = "# comment\n\nA=1\nexport B = two words # note\nC='lit $X'\nD=\"a\\nb \\\"q\\\"\"\nE\nF=\"multi\nline\"\nG=\n";
        assert_eq!(
            parse_dotenv(text).unwrap(),
            [
                entry("A", Some("1"), true),
                entry("B", Some("two words"), true),
                entry("C", Some("lit $X"), false),
                entry("D", Some("a\nb \"q\""), true),
                entry("E", None, false),
                entry("F", Some("multi\nline"), true),
                entry("G", Some(""), true),
            ]
        );
    }

    #[test]
    fn malformed_lines_are_named() {
        assert!(parse_dotenv("A=1\nnot a key=2\n")
            .unwrap_err()
            .starts_with("line 2"));
        assert!(parse_dotenv("A='open\n").is_err());
        assert!(parse_dotenv("A=\"open\n").is_err());
    }
}

#[cfg(test)]
#[path = "dotenv_props.rs"]
mod props;
