//! Compose's variable substitution: `$VAR`, `${VAR}`, `${VAR:-default}`, `${VAR-default}`,
//! `${VAR:?error}`, `${VAR?error}`, `${VAR:+other}`, `${VAR+other}` (defaults and others
//! substituted in turn, so they nest) and `$$` for a `$`. Applied to every string value of a
//! file, never to keys.

use serde_yaml::Value;

/// Where names are looked up.
pub trait Variables {
    fn get(&self, name: &str) -> Option<String>;
    /// A name used without a default and not set: it reads as the empty string.
    fn unset(&self, name: &str);
}

fn is_name_start(c: char) -> bool {
    c == '_' || c.is_ascii_alphabetic()
}

fn is_name_char(c: char) -> bool {
    c == '_' || c.is_ascii_alphanumeric()
}

/// The most `${…}` nested in one another (a file is untrusted input; each level recurses).
const NESTING_LIMIT: usize = 32;

/// `text` substituted; `Err` says what is malformed or which required variable is unset.
pub fn substitute(text: &str, vars: &dyn Variables) -> Result<String, String> {
    substitute_at(text, vars, 0)
}

fn substitute_at(text: &str, vars: &dyn Variables, depth: usize) -> Result<String, String> {
    if depth > NESTING_LIMIT {
        return Err(format!(
            "interpolation nested more than {NESTING_LIMIT} deep"
        ));
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        match after.chars().next() {
            Some('$') => {
                out.push('$');
                rest = &after[1..];
            }
            Some('{') => {
                let end = closing_brace(&after[1..]).ok_or_else(|| {
                    format!("invalid interpolation format for '{text}': no closing brace")
                })?;
                out.push_str(&braced(&after[1..1 + end], vars, depth)?);
                rest = &after[1 + end + 1..];
            }
            Some(c) if is_name_start(c) => {
                let len = after.find(|c| !is_name_char(c)).unwrap_or(after.len());
                out.push_str(&plain(&after[..len], vars));
                rest = &after[len..];
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// The index of the `}` closing a `${` whose body starts `body`, nested `${…}` skipped.
fn closing_brace(body: &str) -> Option<usize> {
    let bytes = body.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'$' if bytes.get(i + 1) == Some(&b'$') => i += 1,
            b'$' if bytes.get(i + 1) == Some(&b'{') => {
                depth += 1;
                i += 1;
            }
            b'}' if depth == 0 => return Some(i),
            b'}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

fn plain(name: &str, vars: &dyn Variables) -> String {
    vars.get(name).unwrap_or_else(|| {
        vars.unset(name);
        String::new()
    })
}

fn braced(body: &str, vars: &dyn Variables, depth: usize) -> Result<String, String> {
    let len = body.find(|c| !is_name_char(c)).unwrap_or(body.len());
    let (name, op) = body.split_at(len);
    if name.is_empty() || !name.starts_with(is_name_start) {
        return Err(format!("invalid interpolation format: '${{{body}}}'"));
    }
    if op.is_empty() {
        return Ok(plain(name, vars));
    }
    let value = vars.get(name);
    let filled = value.as_deref().is_some_and(|v| !v.is_empty());
    let (form, arg) = ["-", "?", "+"]
        .iter()
        .find_map(|sign| {
            op.strip_prefix(&format!(":{sign}"))
                .map(|arg| (format!(":{sign}"), arg))
                .or_else(|| op.strip_prefix(sign).map(|arg| (sign.to_string(), arg)))
        })
        .ok_or_else(|| format!("invalid interpolation format: '${{{body}}}'"))?;
    let required = |present: bool| -> Result<String, String> {
        if present {
            Ok(value.clone().unwrap_or_default())
        } else {
            let why = substitute_at(arg, vars, depth + 1)?;
            Err(format!(
                "required variable {name} is missing a value: {why}"
            ))
        }
    };
    match form.as_str() {
        ":-" if filled => Ok(value.unwrap_or_default()),
        "-" if value.is_some() => Ok(value.unwrap_or_default()),
        ":-" | "-" => substitute_at(arg, vars, depth + 1),
        ":?" => required(filled),
        "?" => required(value.is_some()),
        ":+" if filled => substitute_at(arg, vars, depth + 1),
        "+" if value.is_some() => substitute_at(arg, vars, depth + 1),
        _ => Ok(String::new()),
    }
}

/// Every string value of `value` substituted in place (mapping keys left alone); `Err` names
/// the path to the value.
pub fn substitute_value(value: &mut Value, vars: &dyn Variables, path: &str) -> Result<(), String> {
    match value {
        Value::String(text) => {
            *text = substitute(text, vars).map_err(|e| format!("{path}: {e}"))?;
        }
        Value::Sequence(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                substitute_value(item, vars, &format!("{path}[{i}]"))?;
            }
        }
        Value::Mapping(map) => {
            for (key, item) in map.iter_mut() {
                let key = key.as_str().map_or_else(|| "?".to_string(), str::to_string);
                let at = if path.is_empty() {
                    key
                } else {
                    format!("{path}.{key}")
                };
                substitute_value(item, vars, &at)?;
            }
        }
        Value::Tagged(tagged) => substitute_value(&mut tagged.value, vars, path)?,
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::collections::BTreeMap;

    #[derive(Default)]
    struct Map {
        vars: BTreeMap<String, String>,
        unset: RefCell<Vec<String>>,
    }

    impl Variables for Map {
        fn get(&self, name: &str) -> Option<String> {
            self.vars.get(name).cloned()
        }
        fn unset(&self, name: &str) {
            self.unset.borrow_mut().push(name.to_string());
        }
    }

    fn vars() -> Map {
        Map {
            vars: [("SET", "v"), ("EMPTY", "")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .into(),
            ..Default::default()
        }
    }

    #[test]
    fn every_form() {
        let v = vars();
        let cases = [
            ("$SET/${SET}", "v/v"),
            ("${UNSET:-d}|${EMPTY:-d}|${SET:-d}", "d|d|v"),
            ("${UNSET-d}|${EMPTY-d}|${SET-d}", "d||v"),
            ("${UNSET:+o}|${EMPTY:+o}|${SET:+o}", "||o"),
            ("${UNSET+o}|${EMPTY+o}|${SET+o}", "|o|o"),
            ("${UNSET:-${SET}x}", "vx"),
            ("${UNSET:-${ALSO:-deep}}", "deep"),
            ("$$SET and $${SET} cost $$5", "$SET and ${SET} cost $5"),
            ("a $ b $1", "a $ b $1"),
            ("${SET?e}|${EMPTY?e}|${SET:?e}", "v||v"),
        ];
        for (text, want) in cases {
            assert_eq!(substitute(text, &v).unwrap(), want, "{text}");
        }
        assert!(v.unset.borrow().is_empty());
    }

    #[test]
    fn unset_names_read_empty_and_are_reported() {
        let v = vars();
        assert_eq!(substitute("x${NOPE}y$ALSO_NOT", &v).unwrap(), "xy");
        assert_eq!(*v.unset.borrow(), ["NOPE", "ALSO_NOT"]);
    }

    #[test]
    fn required_and_malformed() {
        let v = vars();
        let e = substitute("${NOPE:?set NOPE first}", &v).unwrap_err();
        assert_eq!(
            e,
            "required variable NOPE is missing a value: set NOPE first"
        );
        assert!(substitute("${EMPTY:?e}", &v).is_err());
        assert!(substitute("${NOPE?e}", &v).is_err());
        for bad in ["${", "${SET", "${}", "${1A}", "${SET:x}", "${SET%%x}"] {
            assert!(substitute(bad, &v).is_err(), "{bad}");
        }
        let deep = format!("{}x{}", "${U:-".repeat(100_000), "}".repeat(100_000));
        assert!(substitute(&deep, &v)
            .unwrap_err()
            .contains("nested more than"));
        let fine = format!("{}x{}", "${U:-".repeat(30), "}".repeat(30));
        assert_eq!(substitute(&fine, &v).unwrap(), "x");
    }

    #[test]
    fn values_not_keys() {
        let v = vars();
        let mut doc: Value =
            serde_yaml::from_str("$SET: [\"$SET\", {k: \"${SET}\"}, 1, true]").unwrap();
        substitute_value(&mut doc, &v, "").unwrap();
        assert_eq!(
            doc,
            serde_yaml::from_str::<Value>("$SET: [v, {k: v}, 1, true]").unwrap()
        );
        let mut bad: Value = serde_yaml::from_str("services: {a: {image: \"${X:?no}\"}}").unwrap();
        let e = substitute_value(&mut bad, &v, "").unwrap_err();
        assert!(
            e.starts_with("services.a.image: required variable X"),
            "{e}"
        );
    }
}

#[cfg(test)]
#[path = "interpolation_props.rs"]
mod props;
