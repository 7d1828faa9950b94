//! The host's docker config (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`),
//! read up to 1 MiB: which helper serves a registry (`credHelpers`, else `credsStore`) and
//! the `auths` entry stored for it (`auth` as base64 `user:password`, or
//! `username`/`password`, and `identitytoken`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use base64::Engine as _;
use serde_json::{Map, Value};
use tokio::io::AsyncReadExt;

use super::credentials::RegistryCredentials;
use super::server_name::{names_registry, server_url};
use crate::error::{Error, ErrorCode, Result};

/// The most read of the docker config.
const CONFIG_LIMIT: u64 = 1 << 20;

pub fn config_path() -> Option<PathBuf> {
    match std::env::var_os("DOCKER_CONFIG").filter(|d| !d.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir).join("config.json")),
        None => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".docker/config.json")),
    }
}

#[derive(Debug, Default)]
pub struct DockerConfig {
    auths: Map<String, Value>,
    creds_store: Option<String>,
    cred_helpers: BTreeMap<String, String>,
}

fn auth_error(host: &str, why: &str) -> Error {
    Error::new(
        ErrorCode::RegistryAuth,
        format!("the docker config's auths entry for registry {host}: {why}"),
    )
}

/// A helper name is the tail of a program name: nothing that could make it a path.
fn helper_name(name: &str) -> Option<String> {
    let ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    ok.then(|| name.to_string())
}

impl DockerConfig {
    /// The config, or `None` when there is none or it is not a JSON object (docker then
    /// goes on without one too).
    pub async fn load() -> Option<DockerConfig> {
        let file = tokio::fs::File::open(config_path()?).await.ok()?;
        let mut text = Vec::new();
        file.take(CONFIG_LIMIT).read_to_end(&mut text).await.ok()?;
        DockerConfig::parse(&text)
    }

    pub fn parse(text: &[u8]) -> Option<DockerConfig> {
        let Value::Object(mut config) = serde_json::from_slice(text).ok()? else {
            return None;
        };
        let auths = match config.remove("auths") {
            Some(Value::Object(auths)) => auths,
            _ => Map::new(),
        };
        let creds_store = config
            .get("credsStore")
            .and_then(Value::as_str)
            .and_then(helper_name);
        let cred_helpers = config
            .get("credHelpers")
            .and_then(Value::as_object)
            .map(|helpers| {
                helpers
                    .iter()
                    .filter_map(|(k, v)| Some((k.clone(), helper_name(v.as_str()?)?)))
                    .collect()
            })
            .unwrap_or_default();
        Some(DockerConfig {
            auths,
            creds_store,
            cred_helpers,
        })
    }

    /// The helper for `host` and the field that names it: its `credHelpers` entry, else
    /// `credsStore`.
    pub fn helper_for(&self, host: &str) -> Option<(&str, &'static str)> {
        let own = self
            .cred_helpers
            .get(host)
            .or_else(|| self.cred_helpers.get(&server_url(host)))
            .or_else(|| {
                self.cred_helpers
                    .iter()
                    .find(|(key, _)| names_registry(key, host))
                    .map(|(_, helper)| helper)
            });
        match own {
            Some(helper) => Some((helper, "credHelpers")),
            None => self.creds_store.as_deref().map(|h| (h, "credsStore")),
        }
    }

    /// The `auths` entry for `host` (its exact key first, then any key naming the same
    /// registry) with credentials in it, decoded.
    pub fn stored_for(&self, host: &str) -> Result<Option<RegistryCredentials>> {
        let entry = self
            .auths
            .get(host)
            .or_else(|| self.auths.get(&server_url(host)))
            .or_else(|| {
                self.auths
                    .iter()
                    .find(|(key, _)| names_registry(key, host))
                    .map(|(_, entry)| entry)
            });
        let Some(entry) = entry else {
            return Ok(None);
        };
        let text = |field: &str| {
            entry
                .get(field)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let (mut username, mut password) = (text("username"), text("password"));
        if let Some(auth) = text("auth") {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(auth.trim())
                .map_err(|_| auth_error(host, "`auth` is not base64"))?;
            let decoded =
                String::from_utf8(decoded).map_err(|_| auth_error(host, "`auth` is not UTF-8"))?;
            let (user, pass) = decoded
                .split_once(':')
                .ok_or_else(|| auth_error(host, "`auth` is not `user:password`"))?;
            username = Some(user.to_string());
            password = Some(pass.to_string());
        }
        let identity_token = text("identitytoken");
        if identity_token.is_none() && (username.is_none() || password.is_none()) {
            return Ok(None);
        }
        Ok(Some(RegistryCredentials {
            username: username.unwrap_or_default(),
            password: password.unwrap_or_default(),
            identity_token,
            server_address: server_url(host),
            source: "auths of the docker config".to_string(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(json: serde_json::Value) -> DockerConfig {
        DockerConfig::parse(json.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn auths_are_found_under_any_name_of_the_registry_and_decoded() {
        let c = config(serde_json::json!({ "auths": {
            "https://index.docker.io/v1/": { "auth": "dXNlcjpwYTpzcw==" },
            "http://127.0.0.1:5000/v2/": { "username": "u", "password": "p" },
            "ghcr.io": { "auth": "bW9uYTo=", "identitytoken": "tok" },
            "empty.example": {},
            "bad.example": { "auth": "%%%" }
        }}));
        for hub in ["docker.io", "index.docker.io", "registry-1.docker.io"] {
            let found = c.stored_for(hub).unwrap().unwrap();
            assert_eq!(
                (found.username.as_str(), found.password.as_str()),
                ("user", "pa:ss")
            );
            assert_eq!(found.server_address, "https://index.docker.io/v1/");
        }
        let local = c.stored_for("127.0.0.1:5000").unwrap().unwrap();
        assert_eq!(local.basic(), Some(("u", "p")));
        let token = c.stored_for("ghcr.io").unwrap().unwrap();
        assert_eq!(token.identity_token.as_deref(), Some("tok"));
        assert_eq!(token.username, "mona");
        assert_eq!(c.stored_for("empty.example").unwrap(), None);
        assert_eq!(c.stored_for("127.0.0.1:5001").unwrap(), None);
        let err = c.stored_for("bad.example").unwrap_err();
        assert_eq!(err.code, ErrorCode::RegistryAuth);
        assert!(!err.message.contains("%%%"));
    }

    #[test]
    fn a_registry_helper_wins_over_the_store_and_names_are_never_paths() {
        let c = config(serde_json::json!({
            "credsStore": "desktop",
            "credHelpers": { "index.docker.io": "hub", "r.example:5000": "../../bin/sh", "q.example": "ecr-login" }
        }));
        assert_eq!(c.helper_for("docker.io"), Some(("hub", "credHelpers")));
        assert_eq!(
            c.helper_for("q.example"),
            Some(("ecr-login", "credHelpers"))
        );
        assert_eq!(
            c.helper_for("r.example:5000"),
            Some(("desktop", "credsStore"))
        );
        assert_eq!(
            c.helper_for("other.example"),
            Some(("desktop", "credsStore"))
        );
        assert!(config(serde_json::json!({})).helper_for("x").is_none());
        assert!(DockerConfig::parse(b"[1]").is_none());
        assert!(DockerConfig::parse(b"not json").is_none());
    }
}
