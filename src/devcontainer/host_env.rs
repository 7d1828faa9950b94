//! The host's environment as devcontainer.json reads it (`${localEnv:NAME}`, and a bare
//! `runArgs -e NAME`): all of it for a host reading its own project, or only the names the
//! host allowed for a session. A name the config asks for outside those is remembered, so
//! that the session is refused rather than silently given an empty value.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};

pub struct HostEnv {
    vars: HashMap<String, String>,
    /// `None`: every name may be read.
    allowed: Option<BTreeSet<String>>,
    denied: RefCell<BTreeSet<String>>,
}

impl HostEnv {
    /// Every variable of this process's environment.
    pub fn all() -> HostEnv {
        HostEnv {
            vars: std::env::vars().collect(),
            allowed: None,
            denied: RefCell::default(),
        }
    }

    /// Only `allowed` of `vars` (`*` allows every name).
    pub fn only(vars: HashMap<String, String>, allowed: &[String]) -> HostEnv {
        let allowed =
            (!allowed.iter().any(|a| a == "*")).then(|| allowed.iter().cloned().collect());
        HostEnv {
            vars,
            allowed,
            denied: RefCell::default(),
        }
    }

    /// Whether `name` may be read (asking does not count it as denied).
    pub fn may_read(&self, name: &str) -> bool {
        self.allowed.as_ref().is_none_or(|a| a.contains(name))
    }

    /// The variable's value; `None` when it is unset or may not be read (then remembered).
    pub fn get(&self, name: &str) -> Option<&str> {
        if self.allowed.as_ref().is_some_and(|a| !a.contains(name)) {
            self.denied.borrow_mut().insert(name.to_string());
            return None;
        }
        self.vars.get(name).map(String::as_str)
    }

    /// Names asked for that may not be read, sorted.
    pub fn denied(&self) -> Vec<String> {
        self.denied.borrow().iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_allowed_names_are_read_and_the_rest_remembered() {
        let vars = HashMap::from([
            ("HOME".to_string(), "/root".to_string()),
            ("SECRET".to_string(), "s".to_string()),
        ]);
        let env = HostEnv::only(vars.clone(), &["HOME".to_string()]);
        assert_eq!(env.get("HOME"), Some("/root"));
        assert_eq!(env.get("SECRET"), None);
        assert_eq!(env.get("UNSET_TOO"), None);
        assert_eq!(env.denied(), ["SECRET", "UNSET_TOO"]);
        let open = HostEnv::only(vars, &["*".to_string()]);
        assert_eq!(open.get("SECRET"), Some("s"));
        assert!(open.denied().is_empty());
    }
}
