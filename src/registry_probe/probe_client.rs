//! The HTTP client of one registry probe (reqwest): TLS verified against the system's roots
//! plus the CAs the engines are given for that registry (`/etc/docker/certs.d/<host>/`,
//! `/etc/containers/certs.d/<host>/`), redirects within bounds, no proxy for a loopback
//! registry, and bodies read within a bound.

use std::path::Path;
use std::time::Duration;

use reqwest::{redirect, Certificate, Client};

use super::probe_outcome::ProbeOutcome;
use crate::error::describe;

/// Where engines look for a registry's own CAs (`<dir>/<host[:port]>/*.crt`).
const CERT_DIRS: [&str; 2] = ["/etc/docker/certs.d", "/etc/containers/certs.d"];
const CERT_FILE_LIMIT: u64 = 1 << 20;
const CERT_FILES: usize = 16;
const REDIRECTS: usize = 5;

/// How the probe speaks to the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// TLS, verified.
    Https,
    /// TLS without verification: an insecure registry's first try, as the engine does.
    HttpsUnverified,
    /// Plain HTTP: an insecure registry that does not speak TLS.
    Http,
}

impl Scheme {
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            _ => "https",
        }
    }
}

/// Whether `host` (`name[:port]`, `[v6]:port`) is this machine's loopback.
pub fn is_loopback(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(v6),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The PEM certificates of the engines' `certs.d` folders for `host`, bounded.
async fn engine_roots(host: &str) -> Vec<Certificate> {
    let mut roots = Vec::new();
    if host.contains(['/', '\\']) || host.starts_with('.') {
        return roots;
    }
    for dir in CERT_DIRS {
        let Ok(mut entries) = tokio::fs::read_dir(Path::new(dir).join(host)).await else {
            continue;
        };
        while let Ok(Some(entry)) = entries.next_entry().await {
            if roots.len() >= CERT_FILES {
                return roots;
            }
            let path = entry.path();
            let is_ca = path.extension().is_some_and(|e| e == "crt");
            let small = tokio::fs::metadata(&path)
                .await
                .is_ok_and(|m| m.is_file() && m.len() <= CERT_FILE_LIMIT);
            if !(is_ca && small) {
                continue;
            }
            if let Ok(pem) = tokio::fs::read(&path).await {
                roots.extend(Certificate::from_pem_bundle(&pem).unwrap_or_default());
            }
        }
    }
    roots
}

/// A client for `host` over `scheme`, each connection bounded by `bound`.
pub async fn client_for(host: &str, scheme: Scheme, bound: Duration) -> Result<Client, String> {
    let mut builder = Client::builder()
        .user_agent("container-isolation (registry probe)")
        .redirect(redirect::Policy::limited(REDIRECTS))
        .connect_timeout(bound)
        .referer(false);
    match scheme {
        Scheme::Https => {
            let roots = engine_roots(host).await;
            if !roots.is_empty() {
                builder = builder.tls_certs_merge(roots);
            }
            builder = builder.https_only(true);
        }
        Scheme::HttpsUnverified => builder = builder.tls_danger_accept_invalid_certs(true),
        Scheme::Http => {}
    }
    if is_loopback(host) {
        builder = builder.no_proxy();
    }
    builder.build().map_err(|e| describe(&e))
}

/// At most `limit` bytes of `response`'s body; the rest is never read.
pub async fn read_bounded(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = limit - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() == limit {
            break;
        }
    }
    Ok(body)
}

/// A response read: its status, its `Retry-After`, and its body within `limit`.
pub struct ReadResponse {
    pub status: reqwest::StatusCode,
    pub retry_after: Option<String>,
    pub body: Vec<u8>,
}

/// Reads `response` (`what` names the request, for a transport failure).
pub async fn read_response(
    response: reqwest::Response,
    limit: usize,
    what: &str,
) -> Result<ReadResponse, ProbeOutcome> {
    let status = response.status();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = read_bounded(response, limit)
        .await
        .map_err(|e| ProbeOutcome::from_transport(&e, what))?;
    Ok(ReadResponse {
        status,
        retry_after,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_in_every_spelling() {
        for host in [
            "127.0.0.1:5000",
            "127.3.2.1",
            "localhost:80",
            "LOCALHOST",
            "[::1]:5000",
        ] {
            assert!(is_loopback(host), "{host}");
        }
        for host in [
            "10.0.0.1:5000",
            "registry.example",
            "[fe80::1]:5000",
            "127.0.0.1.example",
        ] {
            assert!(!is_loopback(host), "{host}");
        }
    }
}
