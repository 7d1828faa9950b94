//! Registry names as docker reads them: a docker config key may be a bare `host[:port]` or
//! a URL (`https://host/v1/`), and Docker Hub has several names (`docker.io`,
//! `index.docker.io`, `registry-1.docker.io`, `https://index.docker.io/v1/`).

/// The key `docker login` writes for Docker Hub, and what its helpers are asked for.
pub const HUB_SERVER: &str = "https://index.docker.io/v1/";

const HUB_NAMES: [&str; 3] = ["docker.io", "index.docker.io", "registry-1.docker.io"];

/// docker's `ConvertToHostname`: the scheme and any path dropped.
fn hostname_of(key: &str) -> &str {
    let bare = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    bare.split('/').next().unwrap_or(bare)
}

pub fn is_docker_hub(host: &str) -> bool {
    let host = hostname_of(host);
    HUB_NAMES.iter().any(|name| name.eq_ignore_ascii_case(host))
}

/// One spelling per registry: lower case, `docker.io` for Docker Hub.
pub fn canonical_host(key: &str) -> String {
    if is_docker_hub(key) {
        return HUB_NAMES[0].to_string();
    }
    hostname_of(key).to_ascii_lowercase()
}

/// The server URL docker gives a credential helper for the registry at `host`.
pub fn server_url(host: &str) -> String {
    if is_docker_hub(host) {
        HUB_SERVER.to_string()
    } else {
        hostname_of(host).to_string()
    }
}

/// The host the registry's distribution API answers at: Docker Hub's API host for any of
/// its names, else `host[:port]` itself.
pub fn api_host(host: &str) -> String {
    if is_docker_hub(host) {
        HUB_NAMES[2].to_string()
    } else {
        hostname_of(host).to_string()
    }
}

/// Whether a docker config key names the registry at `host`.
pub fn names_registry(key: &str, host: &str) -> bool {
    canonical_host(key) == canonical_host(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hub_has_one_name_and_others_keep_their_port() {
        for name in [
            "docker.io",
            "index.docker.io",
            "registry-1.docker.io",
            "https://index.docker.io/v1/",
            "Docker.IO",
        ] {
            assert_eq!(canonical_host(name), "docker.io", "{name}");
            assert_eq!(server_url(name), HUB_SERVER, "{name}");
        }
        assert_eq!(
            canonical_host("https://R.example:5000/v2/"),
            "r.example:5000"
        );
        assert_eq!(server_url("127.0.0.1:5000"), "127.0.0.1:5000");
        assert!(names_registry("http://127.0.0.1:5000", "127.0.0.1:5000"));
        assert!(!names_registry("127.0.0.1:5001", "127.0.0.1:5000"));
        assert!(!names_registry("ghcr.io", "docker.io"));
        assert!(!is_docker_hub("docker.io.evil.example"));
        assert_eq!(api_host("docker.io"), HUB_NAMES[2]);
        assert_eq!(api_host("127.0.0.1:5000"), "127.0.0.1:5000");
    }
}
