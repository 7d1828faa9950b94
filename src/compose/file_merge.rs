//! Compose's merge of one file over another, and of an extending service over the one it
//! extends (the compose specification's merge rules): mappings merge key by key and a later
//! scalar replaces an earlier one; `command`, `entrypoint` and `healthcheck.test` are
//! replaced whole; `environment`, `labels` and the like (list or map) merge by name;
//! `depends_on` and `networks` (list or map) by service or network; `volumes` by target;
//! other lists are appended without duplicates; `!reset` removes a value and `!override`
//! replaces it whole.

use serde_yaml::value::{Tag, TaggedValue};
use serde_yaml::{Mapping, Value};

/// Keys whose list form is `NAME=value` (or `NAME` alone) and that merge by name.
const NAME_MAPS: &[&str] = &[
    "environment",
    "labels",
    "annotations",
    "sysctls",
    "extra_hosts",
];

/// Keys replaced whole.
const REPLACED: &[&str] = &["command", "entrypoint"];

fn tag_is(tagged: &TaggedValue, name: &str) -> bool {
    tagged.tag == Tag::new(name)
}

/// `over` merged into the top level of `base`.
pub fn merge_file(base: &mut Mapping, over: Mapping) {
    for (key, value) in over {
        if key.as_str() == Some("services") {
            let base_services = base
                .entry(key)
                .or_insert_with(|| Value::Mapping(Mapping::new()));
            match (base_services, value) {
                (Value::Mapping(base), Value::Mapping(over)) => {
                    for (name, service) in over {
                        match (base.get_mut(&name), service) {
                            (Some(Value::Mapping(b)), Value::Mapping(o)) => merge_service(b, o),
                            (_, o) => {
                                base.insert(name, o);
                            }
                        }
                    }
                }
                (slot, value) => *slot = value,
            }
            continue;
        }
        merge_entry(base, key, value, "");
    }
}

/// `over` (a service) merged into `base`.
pub fn merge_service(base: &mut Mapping, over: Mapping) {
    for (key, value) in over {
        merge_entry(base, key, value, "service");
    }
}

fn merge_entry(base: &mut Mapping, key: Value, value: Value, within: &str) {
    let name = key.as_str().unwrap_or_default().to_string();
    if let Value::Tagged(tagged) = &value {
        if tag_is(tagged, "reset") {
            base.remove(&key);
            return;
        }
        if tag_is(tagged, "override") {
            let Value::Tagged(tagged) = value else {
                unreachable!()
            };
            base.insert(key, tagged.value);
            return;
        }
    }
    let Some(old) = base.get_mut(&key) else {
        base.insert(key, strip_tags(value));
        return;
    };
    match (within, name.as_str()) {
        ("service", n) if REPLACED.contains(&n) => *old = value,
        ("service", n) if NAME_MAPS.contains(&n) => {
            let mut merged = name_map(old);
            for (k, v) in name_map(&value) {
                merged.insert(k, v);
            }
            *old = Value::Mapping(merged);
        }
        ("service", "depends_on" | "networks") => {
            let mut merged = keyed_map(old);
            for (k, v) in keyed_map(&value) {
                match (merged.get_mut(&k), v) {
                    (Some(Value::Mapping(b)), Value::Mapping(o)) => merge_mapping(b, o),
                    (_, v) => {
                        merged.insert(k, v);
                    }
                }
            }
            *old = Value::Mapping(merged);
        }
        ("service", "volumes") => merge_by(old, value, volume_target),
        ("service", "build") => {
            let mut merged = build_map(old);
            let over = build_map(&value);
            for (k, v) in over {
                merge_entry(&mut merged, k, v, "build");
            }
            *old = Value::Mapping(merged);
        }
        ("build", "args" | "labels") => {
            let mut merged = name_map(old);
            for (k, v) in name_map(&value) {
                merged.insert(k, v);
            }
            *old = Value::Mapping(merged);
        }
        ("service", "healthcheck") => match (old, value) {
            (Value::Mapping(b), Value::Mapping(o)) => {
                for (k, v) in o {
                    if k.as_str() == Some("test") {
                        b.insert(k, v);
                    } else {
                        merge_entry(b, k, v, "healthcheck");
                    }
                }
            }
            (old, value) => *old = value,
        },
        _ => merge_value(old, value),
    }
}

fn merge_mapping(base: &mut Mapping, over: Mapping) {
    for (k, v) in over {
        merge_entry(base, k, v, "");
    }
}

fn merge_value(old: &mut Value, value: Value) {
    match (old, value) {
        (Value::Mapping(b), Value::Mapping(o)) => merge_mapping(b, o),
        (Value::Sequence(b), Value::Sequence(o)) => {
            for item in o {
                if !b.contains(&item) {
                    b.push(item);
                }
            }
        }
        (old, value) => *old = strip_tags(value),
    }
}

/// A sequence merged by a key of its items: an item of `value` replaces the item of `old`
/// with the same key, the others are appended.
fn merge_by(old: &mut Value, value: Value, key: fn(&Value) -> Option<String>) {
    let (Value::Sequence(base), Value::Sequence(over)) = (&mut *old, &value) else {
        *old = value;
        return;
    };
    for item in over {
        let at = key(item).and_then(|k| base.iter().position(|b| key(b).as_deref() == Some(&k)));
        match at {
            Some(i) => base[i] = item.clone(),
            None => base.push(item.clone()),
        }
    }
}

/// A volume's target: the long form's `target`, the short form's second part.
fn volume_target(item: &Value) -> Option<String> {
    match item {
        Value::String(short) => {
            let parts: Vec<&str> = short.split(':').collect();
            Some(parts.get(1).unwrap_or(&parts[0]).to_string())
        }
        Value::Mapping(long) => long
            .get("target")
            .and_then(Value::as_str)
            .map(str::to_string),
        _ => None,
    }
}

fn strip_tags(value: Value) -> Value {
    match value {
        Value::Tagged(tagged) => tagged.value,
        other => other,
    }
}

/// A `NAME=value` list or a mapping, as a mapping (`NAME` alone: null).
pub fn name_map(value: &Value) -> Mapping {
    match value {
        Value::Mapping(map) => map.clone(),
        Value::Sequence(items) => items
            .iter()
            .filter_map(|item| {
                let text = match item {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    _ => return None,
                };
                Some(match text.split_once('=') {
                    Some((k, v)) => (Value::from(k), Value::from(v)),
                    None => (Value::from(text), Value::Null),
                })
            })
            .collect(),
        _ => Mapping::new(),
    }
}

/// `depends_on`/`networks`: a list of names or a mapping, as a mapping (a listed dependency
/// waits for the service to start).
pub fn keyed_map(value: &Value) -> Mapping {
    match value {
        Value::Mapping(map) => map.clone(),
        Value::Sequence(items) => items
            .iter()
            .filter_map(|item| {
                let mut started = Mapping::new();
                started.insert("condition".into(), "service_started".into());
                item.as_str()
                    .map(|name| (Value::from(name), Value::Mapping(started)))
            })
            .collect(),
        _ => Mapping::new(),
    }
}

/// `build: <context>` or its mapping, as a mapping.
fn build_map(value: &Value) -> Mapping {
    match value {
        Value::Mapping(map) => map.clone(),
        other => {
            let mut map = Mapping::new();
            map.insert("context".into(), other.clone());
            map
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> Mapping {
        serde_yaml::from_str(text).unwrap()
    }

    #[test]
    fn later_files_win_by_the_rules_of_each_key() {
        let mut base = yaml(
            r#"
name: first
services:
  app:
    image: a:1
    command: [one, two]
    environment: [A=1, B=2]
    labels: {x: "1"}
    ports: ["80:80"]
    volumes: ["data:/data", "./src:/src"]
    depends_on: [db]
    build: .
    healthcheck: {test: [CMD, a], interval: 5s}
  db: {image: d}
"#,
        );
        let over = yaml(
            r#"
name: second
services:
  app:
    image: a:2
    command: three
    environment: {B: "two", C: "3"}
    labels: [y=2]
    ports: ["80:80", "443:443"]
    volumes: ["other:/data"]
    depends_on: {cache: {condition: service_healthy}}
    build: {args: [V=1], target: t}
    healthcheck: {test: [CMD-SHELL, b]}
  cache: {image: c}
"#,
        );
        merge_file(&mut base, over);
        let want = yaml(
            r#"
name: second
services:
  app:
    image: a:2
    command: three
    environment: {A: "1", B: "two", C: "3"}
    labels: {x: "1", y: "2"}
    ports: ["80:80", "443:443"]
    volumes: ["other:/data", "./src:/src"]
    depends_on: {db: {condition: service_started}, cache: {condition: service_healthy}}
    build: {context: ., args: [V=1], target: t}
    healthcheck: {test: [CMD-SHELL, b], interval: 5s}
  db: {image: d}
  cache: {image: c}
"#,
        );
        assert_eq!(base, want);
    }

    #[test]
    fn reset_and_override() {
        let mut base =
            yaml("services: {app: {image: a, ports: ['1:1'], environment: {A: '1', B: '2'}}}");
        let over = yaml("services: {app: {ports: !reset [], environment: !override {C: '3'}}}");
        merge_file(&mut base, over);
        assert_eq!(
            base,
            yaml("services: {app: {image: a, environment: {C: '3'}}}")
        );
    }
}
