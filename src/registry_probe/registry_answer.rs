//! A registry's answer to one request of the distribution API (its HTTP status, the error
//! codes of its JSON body, a `Retry-After`), and the code it stands for. The status decides
//! first; the body's codes only where the status alone says nothing.

use serde::Deserialize;

use crate::error::ErrorCode;

/// The most of an error body read, and of the registry's words kept from it.
pub const BODY_LIMIT: usize = 64 << 10;
const SHOWN_ERRORS: usize = 3;
const SHOWN_CHARS: usize = 200;

/// Which request the registry answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `GET /v2/`, the version check that also gives the authentication challenge.
    Ping,
    /// The token service the challenge named.
    Token,
    /// `HEAD`/`GET /v2/<name>/manifests/<reference>`.
    Manifest,
}

impl Step {
    fn what(self) -> &'static str {
        match self {
            Step::Ping => "its API root (/v2/)",
            Step::Token => "its token service",
            Step::Manifest => "the manifest",
        }
    }
}

/// One entry of the distribution API's error body, `{"errors":[{"code","message"}]}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RegistryErrorEntry {
    pub code: String,
    #[serde(default)]
    pub message: String,
}

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default)]
    errors: Vec<RegistryErrorEntry>,
}

/// An answer that is not a success.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryAnswer {
    pub step: Step,
    pub status: u16,
    pub errors: Vec<RegistryErrorEntry>,
    /// The body's words when it is not the API's JSON (a proxy's page, plain text).
    pub text: String,
    pub retry_after: Option<String>,
}

/// Printable, on one line, at most `SHOWN_CHARS` characters.
fn shown(text: &str) -> String {
    let line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let words: Vec<&str> = line.split_whitespace().collect();
    let joined = words.join(" ");
    match joined.char_indices().nth(SHOWN_CHARS) {
        Some((at, _)) => format!("{}…", &joined[..at]),
        None => joined,
    }
}

impl RegistryAnswer {
    /// Reads `body` (at most `BODY_LIMIT` bytes of it) as the API's error JSON, else keeps
    /// its words.
    pub fn new(step: Step, status: u16, body: &[u8], retry_after: Option<&str>) -> Self {
        let body = &body[..body.len().min(BODY_LIMIT)];
        let (errors, text) = match serde_json::from_slice::<ErrorBody>(body) {
            Ok(parsed) => (parsed.errors, String::new()),
            Err(_) => (Vec::new(), shown(&String::from_utf8_lossy(body))),
        };
        RegistryAnswer {
            step,
            status,
            errors,
            text,
            retry_after: retry_after.map(shown).filter(|r| !r.is_empty()),
        }
    }

    fn has(&self, codes: &[&str]) -> bool {
        self.errors
            .iter()
            .any(|e| codes.iter().any(|c| e.code.eq_ignore_ascii_case(c)))
    }

    /// The code this answer stands for; `None` when it does not explain a failed pull (a
    /// status with no meaning here, or "not found" from anything but the manifest).
    pub fn code(&self) -> Option<ErrorCode> {
        if self.status == 429 || self.has(&["TOOMANYREQUESTS"]) {
            return Some(ErrorCode::RegistryRateLimited);
        }
        match self.status {
            401 | 403 => return Some(ErrorCode::RegistryAuth),
            500..=599 => return Some(ErrorCode::RegistryError),
            404 if self.step == Step::Manifest => return Some(ErrorCode::ImageNotFound),
            _ => {}
        }
        if self.step == Step::Manifest && self.has(&["MANIFEST_UNKNOWN", "NAME_UNKNOWN"]) {
            return Some(ErrorCode::ImageNotFound);
        }
        if self.has(&["UNAUTHORIZED", "DENIED"]) {
            return Some(ErrorCode::RegistryAuth);
        }
        None
    }

    /// What the registry said: the status, its error codes and messages, when to retry.
    pub fn reason(&self) -> String {
        let mut out = format!("{} answered {}", self.step.what(), self.status_line());
        let said: Vec<String> = self
            .errors
            .iter()
            .take(SHOWN_ERRORS)
            .map(|e| match shown(&e.message) {
                m if m.is_empty() => shown(&e.code),
                m => format!("{}: {m}", shown(&e.code)),
            })
            .collect();
        if !said.is_empty() {
            out = format!("{out} ({})", said.join("; "));
        } else if !self.text.is_empty() {
            out = format!("{out} ({})", self.text);
        }
        if let Some(after) = &self.retry_after {
            out = format!("{out}, retry after {after}");
        }
        out
    }

    fn status_line(&self) -> String {
        match reqwest::StatusCode::from_u16(self.status)
            .ok()
            .and_then(|s| s.canonical_reason())
        {
            Some(words) => format!("{} {words}", self.status),
            None => self.status.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(step: Step, status: u16, body: &str) -> RegistryAnswer {
        RegistryAnswer::new(step, status, body.as_bytes(), None)
    }

    fn errors(code: &str, message: &str) -> String {
        serde_json::json!({ "errors": [{ "code": code, "message": message, "detail": [] }] })
            .to_string()
    }

    #[test]
    fn statuses_and_bodies_map_to_codes() {
        use ErrorCode::*;
        use Step::*;
        let unauthorized = errors("UNAUTHORIZED", "authentication required");
        let manifest_unknown = errors("MANIFEST_UNKNOWN", "manifest unknown");
        let name_unknown = errors("NAME_UNKNOWN", "repository name not known to registry");
        let too_many = errors("TOOMANYREQUESTS", "You have reached your pull rate limit.");
        let denied = errors("DENIED", "requested access to the resource is denied");
        for (step, status, body, code) in [
            (Manifest, 401, unauthorized.as_str(), Some(RegistryAuth)),
            (Manifest, 403, denied.as_str(), Some(RegistryAuth)),
            (Token, 401, "", Some(RegistryAuth)),
            (
                Manifest,
                404,
                manifest_unknown.as_str(),
                Some(ImageNotFound),
            ),
            (Manifest, 404, name_unknown.as_str(), Some(ImageNotFound)),
            (Manifest, 404, "404 page not found", Some(ImageNotFound)),
            // Not found from anything but the manifest says nothing about the image.
            (Ping, 404, "404 page not found", None),
            (Token, 404, "", None),
            (Manifest, 429, too_many.as_str(), Some(RegistryRateLimited)),
            (Token, 429, "", Some(RegistryRateLimited)),
            // A rate limit given with another status is still one.
            (Manifest, 403, too_many.as_str(), Some(RegistryRateLimited)),
            (Manifest, 500, "", Some(RegistryError)),
            (
                Ping,
                503,
                "<html>Service Unavailable</html>",
                Some(RegistryError),
            ),
            (
                Manifest,
                502,
                manifest_unknown.as_str(),
                Some(RegistryError),
            ),
            // Statuses that say nothing alone: the body's codes decide.
            (Manifest, 400, name_unknown.as_str(), Some(ImageNotFound)),
            (Manifest, 400, denied.as_str(), Some(RegistryAuth)),
            (
                Manifest,
                400,
                errors("MANIFEST_INVALID", "x").as_str(),
                None,
            ),
            (Manifest, 405, "", None),
            (Manifest, 302, "", None),
        ] {
            assert_eq!(
                answer(step, status, body).code(),
                code,
                "{step:?} {status} {body}"
            );
        }
    }

    #[test]
    fn reasons_carry_status_codes_and_messages_on_one_bounded_line() {
        let not_found = answer(
            Step::Manifest,
            404,
            &errors("MANIFEST_UNKNOWN", "manifest unknown"),
        );
        assert_eq!(
            not_found.reason(),
            "the manifest answered 404 Not Found (MANIFEST_UNKNOWN: manifest unknown)"
        );
        let limited = RegistryAnswer::new(Step::Manifest, 429, b"{}", Some("60"));
        assert_eq!(
            limited.reason(),
            "the manifest answered 429 Too Many Requests, retry after 60"
        );
        let page = format!("<h1>\n\x1b[31mdown</h1>{}", "x".repeat(500));
        let failed = answer(Step::Ping, 500, &page);
        let reason = failed.reason();
        assert!(
            reason.starts_with(
                "its API root (/v2/) answered 500 Internal Server Error (<h1> [31mdown</h1>xxx"
            ),
            "{reason}"
        );
        assert!(!reason.contains(['\n', '\x1b']), "{reason}");
        assert!(reason.chars().count() < 300, "{reason}");
    }
}
