//! One registry's credentials, with where they came from; their secrets never shown (not
//! by `Debug`, and `redact` takes them out of any text that echoes them).

use super::cred_helper::HelperAnswer;
use super::server_name::server_url;

/// docker's convention: a helper answering this user name gives an identity token.
const TOKEN_USER: &str = "<token>";

#[derive(Clone, PartialEq, Eq)]
pub struct RegistryCredentials {
    pub username: String,
    pub password: String,
    /// An OAuth refresh token the engine exchanges with the registry.
    pub identity_token: Option<String>,
    /// What the credentials are for, as the engine is told (`https://index.docker.io/v1/`
    /// for Docker Hub, else `host[:port]`).
    pub server_address: String,
    /// Where they came from, for messages: the docker config's `auths`, or a helper.
    pub source: String,
}

impl std::fmt::Debug for RegistryCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryCredentials")
            .field("username", &self.username)
            .field("server_address", &self.server_address)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl RegistryCredentials {
    pub fn from_helper(answer: HelperAnswer, host: &str, source: &str) -> RegistryCredentials {
        let (username, password, identity_token) = if answer.username == TOKEN_USER {
            (String::new(), String::new(), Some(answer.secret))
        } else {
            (answer.username, answer.secret, None)
        };
        RegistryCredentials {
            username,
            password,
            identity_token,
            server_address: server_url(host),
            source: source.to_string(),
        }
    }

    /// User and password for HTTP basic auth, when these are not an identity token.
    pub fn basic(&self) -> Option<(&str, &str)> {
        (self.identity_token.is_none() && !self.username.is_empty())
            .then_some((self.username.as_str(), self.password.as_str()))
    }

    /// `text` with every secret of these credentials (and its base64 forms) replaced.
    pub fn redact(&self, text: &str) -> String {
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::STANDARD;
        let mut secrets = vec![
            b64.encode(format!("{}:{}", self.username, self.password)),
            self.password.clone(),
            b64.encode(&self.password),
        ];
        if let Some(token) = &self.identity_token {
            secrets.push(token.clone());
        }
        let mut out = text.to_string();
        for secret in secrets.iter().filter(|s| s.len() >= 3) {
            out = out.replace(secret.as_str(), "***");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(user: &str, secret: &str) -> HelperAnswer {
        HelperAnswer {
            username: user.into(),
            secret: secret.into(),
        }
    }

    #[test]
    fn a_token_user_gives_an_identity_token_and_secrets_never_show() {
        let token =
            RegistryCredentials::from_helper(answer("<token>", "tok-123"), "docker.io", "h");
        assert_eq!(token.identity_token.as_deref(), Some("tok-123"));
        assert_eq!(token.basic(), None);
        assert_eq!(token.server_address, "https://index.docker.io/v1/");
        let plain = RegistryCredentials::from_helper(answer("u", "s3cret"), "r.example", "h");
        assert_eq!(plain.basic(), Some(("u", "s3cret")));
        let shown = format!("{plain:?} {token:?}");
        assert!(
            !shown.contains("s3cret") && !shown.contains("tok-123"),
            "{shown}"
        );
        assert_eq!(
            plain.redact("denied for u:s3cret (dTpzM2NyZXQ=)"),
            "denied for u:*** (***)"
        );
    }
}
