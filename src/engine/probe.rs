//! Connecting to one candidate endpoint and asking it what it is.

use std::sync::Arc;
use std::time::Duration;

use bollard::{Docker, API_DEFAULT_VERSION};

use super::connection::Engine;
use super::detection::Candidate;
use super::endpoint::Endpoint;
use super::info::{kind_from_version, EngineInfo};
use super::local_probe::shares_this_machine;
use super::options::EngineOptions;
use super::ssh_tunnel::SshTunnel;
use super::tls::{self, tls_failure};
use crate::error::describe;
use crate::error::{Error, ErrorCode, Result};

/// How long one auto-detected candidate may take to answer a ping (several are tried in turn).
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a named engine or a network one may take (a busy Podman service, ssh log-in, a
/// TLS handshake, a far network), at most.
const NAMED_PROBE_TIMEOUT: Duration = Duration::from_secs(30);

fn unavailable(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::EngineUnavailable, message)
}

/// An engine the caller named (an explicit socket, host or context) is the only one tried, so
/// it gets the engine timeout up to 30 s: Podman's service answers its ping only after what it
/// is busy with, seconds under load. Auto-detection's local sockets get 3 s each.
fn probe_timeout(candidate: &Candidate, opts: &EngineOptions) -> Duration {
    let patient = candidate.explicit
        || matches!(
            candidate.endpoint,
            Endpoint::Https { .. } | Endpoint::Ssh(_)
        );
    if patient {
        opts.timeout
            .min(NAMED_PROBE_TIMEOUT)
            .max(PROBE_TIMEOUT.min(opts.timeout))
    } else {
        PROBE_TIMEOUT.min(opts.timeout)
    }
}

pub async fn probe(candidate: &Candidate, opts: &EngineOptions) -> Result<Engine> {
    let seconds = opts.timeout.as_secs().max(1);
    let wait = probe_timeout(candidate, opts);
    let mut tunnel = None;
    let docker = match &candidate.endpoint {
        Endpoint::Unix(path) => {
            if !path.exists() {
                return Err(unavailable("no such socket file"));
            }
            Docker::connect_with_unix(&path.to_string_lossy(), seconds, API_DEFAULT_VERSION)
                .map_err(|e| unavailable(describe(&e)))?
        }
        Endpoint::Http(url) => Docker::connect_with_http(url, seconds, API_DEFAULT_VERSION)
            .map_err(|e| unavailable(describe(&e)))?,
        Endpoint::Https { url, tls } => tls::connect(url, tls, seconds)?,
        Endpoint::Ssh(target) => {
            let opened = Arc::new(SshTunnel::open(target, wait)?);
            let socket = opened.socket().to_string_lossy().into_owned();
            tunnel = Some(opened);
            Docker::connect_with_unix(&socket, seconds, API_DEFAULT_VERSION)
                .map_err(|e| unavailable(describe(&e)))?
        }
    };

    let answered = tokio::time::timeout(wait, async {
        docker.ping().await?;
        docker.version().await
    })
    .await;
    let version = match answered {
        Ok(Ok(version)) => version,
        Ok(Err(err)) => return Err(refusal(&err, candidate, tunnel.as_deref()).await),
        Err(_) => {
            let mut message = format!("no answer within {} ms", wait.as_millis());
            if let Some(said) = tunnel.as_deref().map(SshTunnel::last_stderr) {
                if !said.is_empty() {
                    message.push_str(&format!("; ssh said: {said}"));
                }
            }
            return Err(unavailable(message));
        }
    };
    let kind = kind_from_version(&version);
    if let Some(wanted) = opts.kind {
        if wanted != kind {
            return Err(unavailable(format!(
                "answers as {}, but kind '{}' was asked for",
                kind.as_str(),
                wanted.as_str()
            )));
        }
    }
    let local = shares_this_machine(&docker, &candidate.endpoint, opts.timeout).await;
    let info = EngineInfo {
        kind,
        endpoint: candidate.endpoint.to_string(),
        version: version.version.unwrap_or_default(),
        api_version: version.api_version.unwrap_or_default(),
        os: version.os.unwrap_or_default(),
        arch: version.arch.unwrap_or_default(),
        local,
    };
    Ok(Engine::new(
        docker,
        info,
        candidate.endpoint.clone(),
        opts.timeout,
        tunnel,
    ))
}

/// Why a candidate did not answer: a TLS failure is `ENGINE_TLS`, saying what failed;
/// through ssh, what ssh said (it has written it by the time its child is gone).
async fn refusal(
    err: &bollard::errors::Error,
    candidate: &Candidate,
    tunnel: Option<&SshTunnel>,
) -> Error {
    if let Some(why) = tls_failure(err) {
        return Error::new(
            ErrorCode::EngineTls,
            format!(
                "TLS with the engine at {} failed: {why}",
                candidate.endpoint
            ),
        );
    }
    let mut message = describe(err);
    if let Some(tunnel) = tunnel {
        let mut said = tunnel.last_stderr();
        for _ in 0..20 {
            if !said.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
            said = tunnel.last_stderr();
        }
        if !said.is_empty() {
            message.push_str(&format!("; ssh said: {said}"));
        }
    }
    unavailable(message)
}
