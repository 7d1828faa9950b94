//! Docker contexts and the docker CLI's TLS environment, read as the docker CLI reads them:
//! the config folder (`$DOCKER_CONFIG`, else `~/.docker`), its `config.json`'s
//! `currentContext`, a context's `contexts/meta/<sha256(name)>/meta.json` and its TLS
//! files under `contexts/tls/<sha256(name)>/docker/`.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::detection_env::DetectionEnv;
use super::endpoint::Endpoint;
use super::options::TlsOptions;
use crate::error::{Error, Result};

/// The most read of `config.json` or a context's `meta.json`.
const FILE_LIMIT: u64 = 1 << 20;

/// The name docker gives "no context": the host from `DOCKER_HOST` or the default socket.
pub const DEFAULT_CONTEXT: &str = "default";

pub fn config_dir(env: &DetectionEnv) -> Option<PathBuf> {
    match &env.docker_config {
        Some(dir) => Some(PathBuf::from(dir)),
        None => env.home.as_ref().map(|h| PathBuf::from(h).join(".docker")),
    }
}

fn read_small(path: &Path) -> Option<Vec<u8>> {
    let mut text = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(FILE_LIMIT)
        .read_to_end(&mut text)
        .ok()?;
    Some(text)
}

/// `currentContext` of the docker config, when it names one.
pub fn current_context(env: &DetectionEnv) -> Option<String> {
    #[derive(Deserialize)]
    struct Config {
        #[serde(rename = "currentContext", default)]
        current_context: Option<String>,
    }
    let text = read_small(&config_dir(env)?.join("config.json"))?;
    let config: Config = serde_json::from_slice(&text).ok()?;
    config.current_context.filter(|c| !c.is_empty())
}

/// The TLS files in `folder` that exist (docker uses each default file only where it is).
fn files_in(folder: &Path) -> TlsOptions {
    let existing = |name: &str| Some(folder.join(name)).filter(|p| p.is_file());
    TlsOptions {
        ca: existing("ca.pem"),
        cert: existing("cert.pem"),
        key: existing("key.pem"),
        insecure_skip_verify: false,
    }
}

/// `tls: true` and `DOCKER_TLS_VERIFY`: the files of `DOCKER_CERT_PATH`, else of the config
/// folder.
pub fn default_tls(env: &DetectionEnv) -> TlsOptions {
    let folder = env
        .docker_cert_path
        .as_ref()
        .map(PathBuf::from)
        .or_else(|| config_dir(env));
    folder.map(|f| files_in(&f)).unwrap_or_default()
}

/// The endpoint `DOCKER_HOST` names, with TLS when `DOCKER_TLS_VERIFY` is set.
pub fn docker_host_endpoint(env: &DetectionEnv) -> Option<Result<Endpoint>> {
    let host = env.docker_host.as_deref()?;
    Some(
        Endpoint::parse_host(host).and_then(|endpoint| match endpoint {
            Endpoint::Http(_) if env.docker_tls_verify => endpoint.with_tls(default_tls(env)),
            other => Ok(other),
        }),
    )
}

fn digest(name: &str) -> String {
    hex::encode(Sha256::digest(name.as_bytes()))
}

#[derive(Deserialize)]
struct Meta {
    #[serde(rename = "Endpoints", default)]
    endpoints: std::collections::HashMap<String, MetaEndpoint>,
}

#[derive(Deserialize)]
struct MetaEndpoint {
    #[serde(rename = "Host", default)]
    host: Option<String>,
    #[serde(rename = "SkipTLSVerify", default)]
    skip_tls_verify: bool,
}

/// The docker endpoint of the context `name`; a context that does not exist is
/// `INVALID_ARGUMENT` naming it.
pub fn load_context(env: &DetectionEnv, name: &str) -> Result<Endpoint> {
    let dir = config_dir(env)
        .ok_or_else(|| Error::invalid_argument(format!("docker context '{name}': no HOME")))?;
    let id = digest(name);
    let meta_path = dir.join("contexts/meta").join(&id).join("meta.json");
    let text = read_small(&meta_path).ok_or_else(|| {
        Error::invalid_argument(format!(
            "docker context '{name}' does not exist (no {})",
            meta_path.display()
        ))
    })?;
    let meta: Meta = serde_json::from_slice(&text).map_err(|e| {
        Error::invalid_argument(format!(
            "docker context '{name}': {} is not a context: {e}",
            meta_path.display()
        ))
    })?;
    let docker = meta.endpoints.get("docker");
    let host = docker
        .and_then(|d| d.host.clone())
        .filter(|h| !h.is_empty());
    let host = host.ok_or_else(|| {
        Error::invalid_argument(format!(
            "docker context '{name}' has no docker endpoint host"
        ))
    })?;
    let endpoint = Endpoint::parse_host(&host)
        .map_err(|e| Error::invalid_argument(format!("docker context '{name}': {}", e.message)))?;
    let mut tls = files_in(&dir.join("contexts/tls").join(&id).join("docker"));
    tls.insecure_skip_verify = docker.is_some_and(|d| d.skip_tls_verify);
    let wants_tls = tls.ca.is_some() || tls.cert.is_some() || tls.insecure_skip_verify;
    match endpoint {
        Endpoint::Http(_) if wants_tls => endpoint.with_tls(tls),
        other => Ok(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    pub fn temp_config() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ci-ctx-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    pub fn write_context(dir: &Path, name: &str, host: &str, skip: bool, tls: &[&str]) {
        let meta = dir.join("contexts/meta").join(digest(name));
        std::fs::create_dir_all(&meta).unwrap();
        let json = serde_json::json!({
            "Name": name, "Metadata": {},
            "Endpoints": {"docker": {"Host": host, "SkipTLSVerify": skip}}
        });
        std::fs::write(meta.join("meta.json"), json.to_string()).unwrap();
        let tls_dir = dir.join("contexts/tls").join(digest(name)).join("docker");
        for file in tls {
            std::fs::create_dir_all(&tls_dir).unwrap();
            std::fs::write(tls_dir.join(file), "pem").unwrap();
        }
    }

    fn env_for(dir: &Path) -> DetectionEnv {
        DetectionEnv {
            docker_config: Some(dir.to_string_lossy().into()),
            ..Default::default()
        }
    }

    #[test]
    fn digest_is_sha256_hex_of_the_name() {
        assert_eq!(
            digest("default"),
            "37a8eec1ce19687d132fe29051dca629d164e2c4958ba141d5f4133a33f0688f"
        );
    }

    #[test]
    fn contexts_give_their_host_and_tls() {
        let dir = temp_config();
        write_context(
            &dir,
            "remote",
            "tcp://10.1.2.3:2376",
            false,
            &["ca.pem", "cert.pem", "key.pem"],
        );
        write_context(&dir, "plain", "tcp://10.1.2.3:2375", false, &[]);
        write_context(&dir, "skip", "tcp://10.1.2.3:2376", true, &[]);
        write_context(&dir, "over-ssh", "ssh://me@box", false, &[]);
        let env = env_for(&dir);
        let tls_dir = dir
            .join("contexts/tls")
            .join(digest("remote"))
            .join("docker");
        assert_eq!(
            load_context(&env, "remote").unwrap(),
            Endpoint::Https {
                url: "https://10.1.2.3:2376".into(),
                tls: TlsOptions {
                    ca: Some(tls_dir.join("ca.pem")),
                    cert: Some(tls_dir.join("cert.pem")),
                    key: Some(tls_dir.join("key.pem")),
                    insecure_skip_verify: false,
                }
            }
        );
        assert_eq!(
            load_context(&env, "plain").unwrap(),
            Endpoint::Http("http://10.1.2.3:2375".into())
        );
        match load_context(&env, "skip").unwrap() {
            Endpoint::Https { tls, .. } => assert!(tls.insecure_skip_verify && tls.ca.is_none()),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            load_context(&env, "over-ssh").unwrap().to_string(),
            "ssh://me@box"
        );
        let err = load_context(&env, "nope").unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument);
        assert!(err.message.contains("'nope'"), "{}", err.message);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn current_context_and_tls_environment() {
        let dir = temp_config();
        let mut env = env_for(&dir);
        assert_eq!(current_context(&env), None);
        std::fs::write(
            dir.join("config.json"),
            r#"{"auths":{},"currentContext":"remote"}"#,
        )
        .unwrap();
        assert_eq!(current_context(&env).as_deref(), Some("remote"));

        std::fs::write(dir.join("ca.pem"), "pem").unwrap();
        env.docker_host = Some("tcp://h:2376".into());
        env.docker_tls_verify = true;
        match docker_host_endpoint(&env).unwrap().unwrap() {
            Endpoint::Https { url, tls } => {
                assert_eq!(url, "https://h:2376");
                assert_eq!(tls.ca, Some(dir.join("ca.pem")));
                assert_eq!(tls.cert, None);
                assert!(!tls.insecure_skip_verify);
            }
            other => panic!("{other:?}"),
        }
        let certs = temp_config();
        std::fs::write(certs.join("cert.pem"), "pem").unwrap();
        env.docker_cert_path = Some(certs.to_string_lossy().into());
        assert_eq!(default_tls(&env).cert, Some(certs.join("cert.pem")));
        assert_eq!(default_tls(&env).ca, None);
        env.docker_tls_verify = false;
        assert_eq!(
            docker_host_endpoint(&env).unwrap().unwrap(),
            Endpoint::Http("http://h:2376".into())
        );
        std::fs::remove_dir_all(dir).unwrap();
        std::fs::remove_dir_all(certs).unwrap();
    }
}
