//! `${...}` substitution in devcontainer.json strings. Unknown variables, and
//! `${containerEnv:…}` (known only after the container starts), stay verbatim.

use super::host_env::HostEnv;

pub struct Variables<'e> {
    pub local_workspace_folder: String,
    /// The project's own name, also when the workspace folder is a session's clone.
    pub local_workspace_folder_basename: String,
    pub container_workspace_folder: String,
    pub devcontainer_id: String,
    pub local_env: &'e HostEnv,
}

pub fn basename(path: &str) -> &str {
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(path)
}

/// What JavaScript's `.` does not match: the reference CLI's `\$\{(.*?)\}` finds no
/// `${…}` across a line end.
fn ends_line(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// Every `${…}` in `text` (up to its first `}`, on the same line) replaced by
/// `lookup(name, args)`, its `:`-separated parts, as the reference CLI splits them; one it
/// does not know (`None`), and a `${` unclosed on its line, stay verbatim.
pub fn substitute_with(text: &str, lookup: impl Fn(&str, &[&str]) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find(|c| c == '}' || ends_line(c))
            .filter(|&end| after[end..].starts_with('}'));
        let Some(end) = end else {
            out.push_str("${");
            rest = after;
            continue;
        };
        let mut parts = after[..end].split(':');
        let name = parts.next().unwrap_or_default();
        let args: Vec<&str> = parts.collect();
        match lookup(name, &args) {
            Some(value) => out.push_str(&value),
            None => out.push_str(&rest[start..start + 2 + end + 1]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// `${…Env:NAME}` and `${…Env:NAME:default}` as the reference reads them: the variable,
/// else the default (up to a further `:`), else empty; verbatim (`None`) without a name.
pub fn env_value(args: &[&str], get: impl FnOnce(&str) -> Option<String>) -> Option<String> {
    let name = args.first()?;
    Some(
        get(name)
            .or_else(|| args.get(1).map(|d| d.to_string()))
            .unwrap_or_default(),
    )
}

impl Variables<'_> {
    fn lookup(&self, name: &str, args: &[&str]) -> Option<String> {
        match name {
            "localEnv" | "env" => {
                env_value(args, |var| self.local_env.get(var).map(str::to_string))
            }
            "localWorkspaceFolder" => Some(self.local_workspace_folder.clone()),
            "localWorkspaceFolderBasename" => Some(self.local_workspace_folder_basename.clone()),
            "containerWorkspaceFolder" => Some(self.container_workspace_folder.clone()),
            "containerWorkspaceFolderBasename" => {
                Some(basename(&self.container_workspace_folder).into())
            }
            "devcontainerId" => Some(self.devcontainer_id.clone()),
            _ => None,
        }
    }

    pub fn substitute(&self, text: &str) -> String {
        substitute_with(text, |name, args| self.lookup(name, args))
    }

    /// Substitutes in every string of a JSON value.
    pub fn apply(&self, value: &mut serde_json::Value) {
        match value {
            serde_json::Value::String(s) => *s = self.substitute(s),
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| self.apply(v)),
            serde_json::Value::Object(map) => map.values_mut().for_each(|v| self.apply(v)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(env: &HostEnv) -> Variables<'_> {
        Variables {
            local_workspace_folder: "/home/u/proj".into(),
            local_workspace_folder_basename: "proj".into(),
            container_workspace_folder: "/workspace".into(),
            devcontainer_id: "abc".into(),
            local_env: env,
        }
    }

    #[test]
    fn substitutes_known_and_keeps_unknown() {
        let env = HostEnv::only(
            [("HOME".to_string(), "/home/u".to_string())].into(),
            &["*".to_string()],
        );
        let v = vars(&env);
        assert_eq!(v.substitute("${localEnv:HOME}/x"), "/home/u/x");
        assert_eq!(v.substitute("${env:NOPE:fallback}"), "fallback");
        assert_eq!(v.substitute("${localEnv:NOPE}"), "");
        assert_eq!(v.substitute("${localWorkspaceFolderBasename}"), "proj");
        assert_eq!(
            v.substitute("${containerWorkspaceFolder}/a"),
            "/workspace/a"
        );
        assert_eq!(v.substitute("${containerEnv:PATH}"), "${containerEnv:PATH}");
        assert_eq!(
            v.substitute("${whatever} ${unclosed"),
            "${whatever} ${unclosed"
        );
    }
}

#[cfg(test)]
#[path = "variables_props.rs"]
mod props;
