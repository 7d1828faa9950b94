//! The environment a compose config is interpolated from: the host's variables the host
//! granted (`trust.localEnv`, the grant of devcontainer.json's `${localEnv:…}`), then the
//! project's `.env`. Nothing else of the host is read. Names used without a default and
//! found nowhere, and names the host's environment was not asked for, are remembered so
//! that they can be warned about by name.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use super::dotenv::parse_dotenv;
use super::interpolation::{substitute, Variables};
use crate::devcontainer::HostEnv;

pub struct ComposeEnv<'a> {
    host: &'a HostEnv,
    dotenv: BTreeMap<String, String>,
    unset: RefCell<BTreeSet<String>>,
    not_read: RefCell<BTreeSet<String>>,
}

impl<'a> ComposeEnv<'a> {
    pub fn new(host: &'a HostEnv) -> ComposeEnv<'a> {
        ComposeEnv {
            host,
            dotenv: BTreeMap::new(),
            unset: RefCell::default(),
            not_read: RefCell::default(),
        }
    }

    /// The project's `.env`, each value interpolated from the host's granted variables and
    /// the entries before it. `Err` says what does not parse.
    pub fn load_dotenv(&mut self, text: &str) -> Result<(), String> {
        for entry in parse_dotenv(text)? {
            let value = match entry.value {
                Some(value) if entry.interpolate => substitute(&value, self)?,
                Some(value) => value,
                None => match self.get(&entry.key) {
                    Some(value) => value,
                    None => continue,
                },
            };
            self.dotenv.insert(entry.key, value);
        }
        Ok(())
    }

    /// A setting of compose itself (`COMPOSE_PROFILES`, `COMPOSE_PROJECT_NAME`): looked up
    /// as a variable, but not listed as not read when the host does not grant it.
    pub fn setting(&self, name: &str) -> Option<String> {
        match self.host.may_read(name) {
            true => self.host.get(name).map(str::to_string),
            false => None,
        }
        .or_else(|| self.dotenv.get(name).cloned())
    }

    /// Names used without a default that are set nowhere, sorted.
    pub fn unset_names(&self) -> Vec<String> {
        self.unset.borrow().iter().cloned().collect()
    }

    /// Names the host's environment was not asked for, sorted.
    pub fn not_read(&self) -> Vec<String> {
        self.not_read.borrow().iter().cloned().collect()
    }
}

impl Variables for ComposeEnv<'_> {
    fn get(&self, name: &str) -> Option<String> {
        if self.host.may_read(name) {
            if let Some(value) = self.host.get(name) {
                return Some(value.to_string());
            }
        } else if !self.dotenv.contains_key(name) {
            self.not_read.borrow_mut().insert(name.to_string());
        }
        self.dotenv.get(name).cloned()
    }

    fn unset(&self, name: &str) {
        self.unset.borrow_mut().insert(name.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn the_host_only_as_granted_then_dotenv() {
        let host = HostEnv::only(
            HashMap::from([
                ("GRANTED".to_string(), "host".to_string()),
                ("SECRET".to_string(), "s".to_string()),
            ]),
            &["GRANTED".to_string()],
        );
        let mut env = ComposeEnv::new(&host);
        env.load_dotenv("GRANTED=file\nSECRET=file-secret\nREF=${GRANTED}-$SECRET\nONLY=x\n")
            .unwrap();
        assert_eq!(env.get("GRANTED").as_deref(), Some("host"));
        assert_eq!(env.get("SECRET").as_deref(), Some("file-secret"));
        assert_eq!(env.get("REF").as_deref(), Some("host-file-secret"));
        assert_eq!(env.get("NOWHERE"), None);
        assert_eq!(env.not_read(), ["NOWHERE"]);
        assert_eq!(
            substitute("${NOWHERE}", &env).unwrap(),
            "",
            "unset reads as empty"
        );
        assert_eq!(env.unset_names(), ["NOWHERE"]);
    }
}
