//! Credentials for a registry from the host's docker config (`$DOCKER_CONFIG/config.json`,
//! else `~/.docker/config.json`): the `auths` entry for the registry, `auth` (base64 of
//! `user:password`) or `username`/`password`. Credential helpers are not run.

use std::io::Read;
use std::path::PathBuf;

use base64::Engine as _;
use serde_json::Value;

/// The most read of the docker config.
const CONFIG_LIMIT: u64 = 1 << 20;

fn config_path() -> Option<PathBuf> {
    match std::env::var_os("DOCKER_CONFIG") {
        Some(dir) => Some(PathBuf::from(dir).join("config.json")),
        None => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".docker/config.json")),
    }
}

/// `https://host/v1/` → `host`.
fn registry_of(key: &str) -> &str {
    let bare = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    bare.split('/').next().unwrap_or(bare)
}

fn credentials(entry: &Value) -> Option<(String, String)> {
    if let Some(auth) = entry
        .get("auth")
        .and_then(Value::as_str)
        .filter(|a| !a.is_empty())
    {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(auth)
            .ok()?;
        let text = String::from_utf8(decoded).ok()?;
        let (user, password) = text.split_once(':')?;
        return Some((user.to_string(), password.to_string()));
    }
    let user = entry.get("username").and_then(Value::as_str)?;
    let password = entry.get("password").and_then(Value::as_str)?;
    Some((user.to_string(), password.to_string()))
}

/// The user and password the host's docker config holds for `registry`, if any.
pub fn registry_credentials(registry: &str) -> Option<(String, String)> {
    let mut text = Vec::new();
    std::fs::File::open(config_path()?)
        .ok()?
        .take(CONFIG_LIMIT)
        .read_to_end(&mut text)
        .ok()?;
    let config: Value = serde_json::from_slice(&text).ok()?;
    let auths = config.get("auths")?.as_object()?;
    auths
        .iter()
        .find(|(key, _)| registry_of(key) == registry)
        .and_then(|(_, entry)| credentials(entry))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_matched_by_host_and_decoded() {
        assert_eq!(registry_of("https://r.example/v1/"), "r.example");
        assert_eq!(registry_of("127.0.0.1:5000"), "127.0.0.1:5000");
        let entry = serde_json::json!({ "auth": "dXNlcjpwYTpzcw==" });
        assert_eq!(credentials(&entry), Some(("user".into(), "pa:ss".into())));
        let entry = serde_json::json!({ "username": "u", "password": "p" });
        assert_eq!(credentials(&entry), Some(("u".into(), "p".into())));
        assert_eq!(credentials(&serde_json::json!({})), None);
    }
}
