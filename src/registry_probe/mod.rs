//! Asking an image registry directly, from this machine, what it answers for an image's
//! manifest: the distribution API's `/v2/` ping, its authentication (the challenge, then
//! basic credentials or the token handshake) with the credentials a pull uses, then
//! `HEAD /v2/<name>/manifests/<reference>` with the manifest media types, and a `GET` for
//! the error body when that is not a success (and for an index, when a platform is asked
//! for, whether it holds an image for it). A failed pull is read by this answer (its HTTP
//! status and the error codes of its body) rather than by the engine's wording.
//!
//! TLS always, verified, except for a registry the engine itself reaches insecurely (its
//! insecure registries: loopback by default), which is tried as the engine tries it: TLS
//! unverified first, then plain HTTP.

mod platform_match;
mod probe_client;
mod probe_outcome;
mod registry_answer;
mod token_handshake;

pub use probe_client::is_loopback;
pub use probe_outcome::ProbeOutcome;
pub use registry_answer::{RegistryAnswer, RegistryErrorEntry, Step};

use std::time::Duration;

use oci_client::manifest::{
    IMAGE_MANIFEST_LIST_MEDIA_TYPE, IMAGE_MANIFEST_MEDIA_TYPE, OCI_IMAGE_INDEX_MEDIA_TYPE,
    OCI_IMAGE_MEDIA_TYPE,
};
use reqwest::{Client, Method, StatusCode};
use url::Url;

use platform_match::{is_index, missing_platform, Platform, INDEX_LIMIT};
use probe_client::{client_for, read_bounded, read_response, Scheme};
use registry_answer::BODY_LIMIT;
use token_handshake::{authorize, challenge_of, Authorization, Challenge};

use crate::registry_auth::RegistryCredentials;

/// The image whose manifest is asked for, and how.
pub struct ProbeTarget<'a> {
    /// The API's `host[:port]` (Docker Hub's API host for Docker Hub).
    pub host: &'a str,
    /// The repository at the registry (`library/node`, `ci/busy`).
    pub path: &'a str,
    /// A tag or a digest.
    pub reference: &'a str,
    /// `os/arch[/variant]` the pull asked for, if any.
    pub platform: Option<&'a str>,
    pub credentials: Option<&'a RegistryCredentials>,
    /// Whether the engine reaches this registry without verified TLS.
    pub insecure: bool,
    /// The longest the whole probe may take, and each connection.
    pub bound: Duration,
}

impl ProbeTarget<'_> {
    fn manifest_url(&self, scheme: Scheme) -> Result<Url, ProbeOutcome> {
        let bad = |why: String| ProbeOutcome::Inconclusive(why);
        let mut url = Url::parse(&format!("{}://{}/", scheme.as_str(), self.host))
            .map_err(|e| bad(format!("'{}' is not a registry host: {e}", self.host)))?;
        let parts: Vec<&str> = self.path.split('/').collect();
        if parts
            .iter()
            .any(|p| p.is_empty() || *p == "." || *p == "..")
        {
            return Err(bad(format!("'{}' is not a repository path", self.path)));
        }
        url.path_segments_mut()
            .map_err(|_| bad(format!("'{}' is not a registry host", self.host)))?
            .clear()
            .push("v2")
            .extend(parts)
            .push("manifests")
            .push(self.reference);
        Ok(url)
    }
}

const MANIFEST_TYPES: [&str; 4] = [
    OCI_IMAGE_INDEX_MEDIA_TYPE,
    IMAGE_MANIFEST_LIST_MEDIA_TYPE,
    OCI_IMAGE_MEDIA_TYPE,
    IMAGE_MANIFEST_MEDIA_TYPE,
];

/// What the registry answers for `target`'s manifest, within `target.bound`.
pub async fn probe_manifest(target: &ProbeTarget<'_>) -> ProbeOutcome {
    let schemes: &[Scheme] = if target.insecure {
        &[Scheme::HttpsUnverified, Scheme::Http]
    } else {
        &[Scheme::Https]
    };
    let tries = async {
        let mut unreachable = Vec::new();
        for &scheme in schemes {
            match probe_over(target, scheme).await {
                (ProbeOutcome::Unreachable(why), _) => unreachable.push(why),
                (outcome, token) => return (outcome, token),
            }
        }
        (ProbeOutcome::Unreachable(unreachable.join("; ")), None)
    };
    match tokio::time::timeout(target.bound, tries).await {
        Ok((outcome, Some(token))) => outcome.scrubbed(&token),
        Ok((outcome, None)) => outcome,
        Err(_) => ProbeOutcome::TimedOut(target.bound),
    }
}

/// The probe over one scheme, with the bearer token it got (to keep out of messages).
async fn probe_over(target: &ProbeTarget<'_>, scheme: Scheme) -> (ProbeOutcome, Option<String>) {
    let client = match client_for(target.host, scheme, target.bound).await {
        Ok(client) => client,
        Err(why) => return (ProbeOutcome::Inconclusive(why), None),
    };
    let challenge = match ping(&client, scheme, target.host).await {
        Ok(challenge) => challenge,
        Err(outcome) => return (outcome, None),
    };
    let mut token = None;
    let outcome = ask_manifest(&client, scheme, target, challenge, &mut token).await;
    (outcome, token)
}

/// `GET /v2/`: the challenge to answer, if any.
async fn ping(
    client: &Client,
    scheme: Scheme,
    host: &str,
) -> Result<Option<Challenge>, ProbeOutcome> {
    let url = format!("{}://{host}/v2/", scheme.as_str());
    let response = client
        .get(&url)
        .send()
        .await
        .map_err(|e| ProbeOutcome::from_transport(&e, &format!("GET {url}")))?;
    let status = response.status();
    if status.is_success() {
        return Ok(None);
    }
    if status == StatusCode::UNAUTHORIZED {
        return Ok(challenge_of(response.headers()));
    }
    let answer = answer_of(Step::Ping, response).await?;
    match answer.code() {
        Some(_) => Err(ProbeOutcome::Answered(answer)),
        None => Err(ProbeOutcome::Inconclusive(format!(
            "it does not answer as a registry: {}",
            answer.reason()
        ))),
    }
}

async fn answer_of(
    step: Step,
    response: reqwest::Response,
) -> Result<RegistryAnswer, ProbeOutcome> {
    let read = read_response(response, BODY_LIMIT, "the manifest").await?;
    Ok(RegistryAnswer::new(
        step,
        read.status.as_u16(),
        &read.body,
        read.retry_after.as_deref(),
    ))
}

async fn manifest_request(
    client: &Client,
    method: Method,
    url: &Url,
    authorization: Option<&Authorization>,
) -> Result<reqwest::Response, ProbeOutcome> {
    let mut request = client
        .request(method.clone(), url.clone())
        .header("accept", MANIFEST_TYPES.join(", "));
    if let Some(authorization) = authorization {
        request = authorization.apply(request);
    }
    request
        .send()
        .await
        .map_err(|e| ProbeOutcome::from_transport(&e, &format!("{method} {url}")))
}

/// `HEAD` the manifest (authenticating once more if its `401` brings a challenge the ping
/// did not), then `GET` it for the error body when the `HEAD` was not a success. A `GET`
/// is made only then: some registries count a manifest's `GET` as a pull.
async fn ask_manifest(
    client: &Client,
    scheme: Scheme,
    target: &ProbeTarget<'_>,
    mut challenge: Option<Challenge>,
    token: &mut Option<String>,
) -> ProbeOutcome {
    let url = match target.manifest_url(scheme) {
        Ok(url) => url,
        Err(outcome) => return outcome,
    };
    let scope = format!("repository:{}:pull", target.path);
    let plain = scheme == Scheme::Http;
    let mut authorization = None;
    let mut challenged = false;
    let head = loop {
        if let Some(challenge) = challenge.take() {
            challenged = true;
            authorization =
                match authorize(client, &challenge, &scope, target.credentials, plain).await {
                    Ok(found) => found,
                    Err(outcome) => return outcome,
                };
            *token = authorization
                .as_ref()
                .and_then(|a| a.token())
                .map(str::to_string);
        }
        let head = match manifest_request(client, Method::HEAD, &url, authorization.as_ref()).await
        {
            Ok(response) => response,
            Err(outcome) => return outcome,
        };
        if head.status() == StatusCode::UNAUTHORIZED && !challenged {
            challenge = challenge_of(head.headers());
            if challenge.is_some() {
                continue;
            }
        }
        break head;
    };
    let wanted = target.platform.and_then(Platform::parse);
    if head.status().is_success() && !(wanted.is_some() && is_index(content_type(&head))) {
        return ProbeOutcome::Present;
    }
    let got = match manifest_request(client, Method::GET, &url, authorization.as_ref()).await {
        Ok(response) => response,
        Err(outcome) => return outcome,
    };
    if !got.status().is_success() {
        return match answer_of(Step::Manifest, got).await {
            Ok(answer) => ProbeOutcome::Answered(answer),
            Err(outcome) => outcome,
        };
    }
    match wanted {
        Some(wanted) if is_index(content_type(&got)) => platform_in_index(got, &wanted).await,
        _ => ProbeOutcome::Present,
    }
}

fn content_type(response: &reqwest::Response) -> &str {
    response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

/// Present, unless the index holds no image for `wanted`.
async fn platform_in_index(index: reqwest::Response, wanted: &Platform) -> ProbeOutcome {
    let Ok(body) = read_bounded(index, INDEX_LIMIT).await else {
        return ProbeOutcome::Present;
    };
    match missing_platform(&body, wanted) {
        Some(held) => ProbeOutcome::WithoutPlatform {
            wanted: wanted.to_string(),
            held: held.iter().map(Platform::to_string).collect(),
        },
        None => ProbeOutcome::Present,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_urls_keep_each_path_segment_and_refuse_dot_segments() {
        let target = |path: &'static str, reference: &'static str| ProbeTarget {
            host: "127.0.0.1:5000",
            path,
            reference,
            platform: None,
            credentials: None,
            insecure: true,
            bound: Duration::from_secs(1),
        };
        assert_eq!(
            target("ci/busy", "1")
                .manifest_url(Scheme::Http)
                .unwrap()
                .as_str(),
            "http://127.0.0.1:5000/v2/ci/busy/manifests/1"
        );
        let digest = format!("sha256:{}", "a".repeat(64));
        let pinned = ProbeTarget {
            reference: &digest,
            ..target("library/node", "")
        };
        assert_eq!(
            pinned.manifest_url(Scheme::Https).unwrap().as_str(),
            format!("https://127.0.0.1:5000/v2/library/node/manifests/{digest}")
        );
        assert_eq!(
            target("a", "x?y#z")
                .manifest_url(Scheme::Http)
                .unwrap()
                .as_str(),
            "http://127.0.0.1:5000/v2/a/manifests/x%3Fy%23z"
        );
        for bad in ["a/../b", "./a", "a//b"] {
            assert!(
                target(bad, "1").manifest_url(Scheme::Http).is_err(),
                "{bad}"
            );
        }
    }

    fn target(host: &str, insecure: bool) -> ProbeTarget<'_> {
        ProbeTarget {
            host,
            path: "ci/busy",
            reference: "1",
            platform: None,
            credentials: None,
            insecure,
            bound: Duration::from_secs(10),
        }
    }

    #[tokio::test]
    async fn tls_that_fails_and_a_port_nothing_listens_on_are_unreachable() {
        use tokio::io::AsyncWriteExt;
        // A server that answers a TLS hello in plain text.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let plain = listener.local_addr().unwrap().to_string();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let _ = socket.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n").await;
            }
        });
        match probe_manifest(&target(&plain, false)).await {
            ProbeOutcome::Unreachable(why) => {
                assert!(why.contains(&format!("https://{plain}/v2/")), "{why}")
            }
            other => panic!("{other:?}"),
        }
        let closed = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().to_string()
        };
        match probe_manifest(&target(&closed, true)).await {
            ProbeOutcome::Unreachable(why) => {
                assert!(why.contains("https://") && why.contains("http://"), "{why}");
                assert_eq!(
                    ProbeOutcome::Unreachable(why).code(),
                    Some(crate::error::ErrorCode::RegistryUnreachable)
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
