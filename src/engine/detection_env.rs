//! The process environment engine detection reads (`DOCKER_HOST`, contexts, the usual
//! socket folders), taken once so that tests can supply their own.

/// The environment auto-detection reads; a struct so that tests can supply their own.
#[derive(Debug, Clone, Default)]
pub struct DetectionEnv {
    pub docker_host: Option<String>,
    /// `DOCKER_TLS_VERIFY` is set and not empty.
    pub docker_tls_verify: bool,
    pub docker_cert_path: Option<String>,
    pub docker_context: Option<String>,
    pub docker_config: Option<String>,
    pub container_host: Option<String>,
    pub xdg_runtime_dir: Option<String>,
    pub home: Option<String>,
}

impl DetectionEnv {
    pub fn from_process() -> Self {
        let non_empty = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        DetectionEnv {
            docker_host: non_empty("DOCKER_HOST"),
            docker_tls_verify: non_empty("DOCKER_TLS_VERIFY").is_some(),
            docker_cert_path: non_empty("DOCKER_CERT_PATH"),
            docker_context: non_empty("DOCKER_CONTEXT"),
            docker_config: non_empty("DOCKER_CONFIG"),
            container_host: non_empty("CONTAINER_HOST"),
            xdg_runtime_dir: non_empty("XDG_RUNTIME_DIR"),
            home: non_empty("HOME"),
        }
    }
}
