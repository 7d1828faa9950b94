//! A registry's authentication as the engines do it: the challenge of a `401`
//! (`WWW-Authenticate`), then HTTP basic with the docker config's credentials, or a bearer
//! token from the token service the challenge names (`GET` with the basic credentials, or
//! none; an identity token `POST`ed as an OAuth refresh token).

use reqwest::header::{HeaderMap, WWW_AUTHENTICATE};
use reqwest::{Client, RequestBuilder};
use serde::Deserialize;
use url::Url;

use super::probe_client::{is_loopback, read_response, ReadResponse};
use super::probe_outcome::ProbeOutcome;
use super::registry_answer::{RegistryAnswer, Step, BODY_LIMIT};
use crate::registry_auth::RegistryCredentials;

/// How the registry wants to be authenticated to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Challenge {
    Basic,
    Bearer {
        realm: String,
        service: Option<String>,
    },
}

/// What goes on the probe's requests.
#[derive(Clone)]
pub enum Authorization {
    Basic(String, String),
    Bearer(String),
}

impl Authorization {
    pub fn apply(&self, request: RequestBuilder) -> RequestBuilder {
        match self {
            Authorization::Basic(user, password) => request.basic_auth(user, Some(password)),
            Authorization::Bearer(token) => request.bearer_auth(token),
        }
    }

    /// The secret a registry's text must never echo into a message.
    pub fn token(&self) -> Option<&str> {
        match self {
            Authorization::Bearer(token) => Some(token),
            Authorization::Basic(..) => None,
        }
    }
}

/// The challenge of a `401`'s `WWW-Authenticate` headers: bearer when offered, else basic.
pub fn challenge_of(headers: &HeaderMap) -> Option<Challenge> {
    let mut basic = false;
    for value in headers.get_all(WWW_AUTHENTICATE) {
        let Ok(text) = value.to_str() else { continue };
        let Ok(challenges) = http_auth::parse_challenges(text) else {
            continue;
        };
        for challenge in challenges {
            if challenge.scheme.eq_ignore_ascii_case("bearer") {
                let param = |name: &str| {
                    challenge
                        .params
                        .iter()
                        .find(|(k, _)| k.eq_ignore_ascii_case(name))
                        .map(|(_, v)| v.to_unescaped())
                };
                if let Some(realm) = param("realm") {
                    let service = param("service");
                    return Some(Challenge::Bearer { realm, service });
                }
            }
            basic |= challenge.scheme.eq_ignore_ascii_case("basic");
        }
    }
    basic.then_some(Challenge::Basic)
}

#[derive(Deserialize)]
struct TokenAnswer {
    #[serde(default)]
    token: String,
    #[serde(default)]
    access_token: String,
}

/// The token service's URL, if the probe may use it: TLS, or plain HTTP only to a loopback
/// service or where the registry itself is spoken to without TLS.
fn token_url(realm: &str, plain_allowed: bool) -> Result<Url, ProbeOutcome> {
    let url = Url::parse(realm).map_err(|e| {
        ProbeOutcome::Inconclusive(format!("its token service '{realm}' is not a URL: {e}"))
    })?;
    let host = url.host_str().unwrap_or_default();
    match url.scheme() {
        "https" => Ok(url),
        "http" if plain_allowed || is_loopback(host) => Ok(url),
        _ => Err(ProbeOutcome::Inconclusive(format!(
            "its token service '{realm}' is not one credentials may be sent to (not https)"
        ))),
    }
}

/// The authorization for pulling `scope` after `challenge`; `None` for an anonymous
/// request (a basic challenge and no credentials).
pub async fn authorize(
    client: &Client,
    challenge: &Challenge,
    scope: &str,
    credentials: Option<&RegistryCredentials>,
    plain_allowed: bool,
) -> Result<Option<Authorization>, ProbeOutcome> {
    let basic = credentials.and_then(|c| c.basic());
    let (realm, service) = match challenge {
        Challenge::Basic => {
            return Ok(basic.map(|(u, p)| Authorization::Basic(u.into(), p.into())));
        }
        Challenge::Bearer { realm, service } => (realm, service),
    };
    let mut url = token_url(realm, plain_allowed)?;
    let mut fields = vec![("scope", scope)];
    if let Some(service) = service {
        fields.push(("service", service));
    }
    let identity = credentials.and_then(|c| c.identity_token.as_deref());
    let request = match identity {
        Some(refresh) => {
            fields.extend([
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh),
                ("client_id", "container-isolation"),
            ]);
            let form = url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs(&fields)
                .finish();
            client
                .post(url)
                .header("content-type", "application/x-www-form-urlencoded")
                .body(form)
        }
        None => {
            url.query_pairs_mut().extend_pairs(&fields);
            let request = client.get(url);
            match basic {
                Some((user, password)) => request.basic_auth(user, Some(password)),
                None => request,
            }
        }
    };
    let response = request
        .send()
        .await
        .map_err(|e| ProbeOutcome::from_transport(&e, "its token service"))?;
    let ReadResponse {
        status,
        retry_after,
        body,
    } = read_response(response, BODY_LIMIT, "its token service").await?;
    if !status.is_success() {
        let answer =
            RegistryAnswer::new(Step::Token, status.as_u16(), &body, retry_after.as_deref());
        return Err(ProbeOutcome::Answered(answer));
    }
    let token = serde_json::from_slice::<TokenAnswer>(&body)
        .ok()
        .map(|t| {
            if t.token.is_empty() {
                t.access_token
            } else {
                t.token
            }
        })
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            ProbeOutcome::Inconclusive("its token service answered without a token".into())
        })?;
    Ok(Some(Authorization::Bearer(token)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append(WWW_AUTHENTICATE, HeaderValue::from_str(v).unwrap());
        }
        map
    }

    #[test]
    fn challenges_read_as_the_engines_read_them() {
        assert_eq!(
            challenge_of(&headers(&[
                r#"Bearer realm="http://127.0.0.1:9/token",service="ci",scope="repository:a/b:pull""#
            ])),
            Some(Challenge::Bearer {
                realm: "http://127.0.0.1:9/token".into(),
                service: Some("ci".into())
            })
        );
        assert_eq!(
            challenge_of(&headers(&[r#"Basic realm="test""#])),
            Some(Challenge::Basic)
        );
        assert_eq!(
            challenge_of(&headers(&[
                r#"Basic realm="x""#,
                r#"Bearer realm="https://a/t""#
            ])),
            Some(Challenge::Bearer {
                realm: "https://a/t".into(),
                service: None
            })
        );
        assert_eq!(
            challenge_of(&headers(&["Bearer service=\"no-realm\""])),
            None
        );
        assert_eq!(
            challenge_of(&headers(&["Bearer realm=\"unterminated"])),
            None
        );
        assert_eq!(challenge_of(&HeaderMap::new()), None);
    }

    #[test]
    fn credentials_go_to_a_plain_http_token_service_only_on_loopback_or_when_allowed() {
        assert!(token_url("https://auth.example/token", false).is_ok());
        assert!(token_url("http://127.0.0.1:9/token", false).is_ok());
        assert!(token_url("http://auth.example/token", true).is_ok());
        assert!(token_url("http://auth.example/token", false).is_err());
        assert!(token_url("file:///etc/passwd", true).is_err());
        assert!(token_url("not a url", true).is_err());
    }
}
