//! TLS to a `tcp://` engine: the client configuration from PEM files (as the docker CLI's
//! `--tlscacert/--tlscert/--tlskey`), bollard on a rustls connector, and telling a TLS
//! failure apart from an engine that is not there.

use std::path::Path;
use std::sync::Arc;

use bollard::{BollardRequest, Docker, API_DEFAULT_VERSION};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

use super::options::TlsOptions;
use crate::error::{Error, Result};

/// A bollard client for `url` (`https://host:port`) speaking TLS as `tls` says.
pub fn connect(url: &str, tls: &TlsOptions, timeout_secs: u64) -> Result<Docker> {
    let config = client_config(tls)?;
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    let https = hyper_rustls::HttpsConnector::from((http, config));
    let client = Arc::new(
        Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(8)
            .build(https),
    );
    let transport = move |request: BollardRequest| {
        let client = client.clone();
        async move {
            client
                .request(request)
                .await
                .map_err(bollard::errors::Error::from)
        }
    };
    Docker::connect_with_custom_transport(transport, Some(url), timeout_secs, API_DEFAULT_VERSION)
        .map_err(|e| Error::invalid_argument(format!("engine host {url}: {e}")))
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// Roots are the CA file alone when one is given (the server must chain to it), else the
/// system's; the client certificate is sent when both cert and key are given.
pub fn client_config(tls: &TlsOptions) -> Result<ClientConfig> {
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::invalid_argument(format!("TLS set-up: {e}")))?;
    let builder = if tls.insecure_skip_verify {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerification(provider())))
    } else {
        builder.with_root_certificates(roots(tls.ca.as_deref())?)
    };
    match (&tls.cert, &tls.key) {
        (Some(cert), Some(key)) => builder
            .with_client_auth_cert(certificates(cert, "tls.cert")?, private_key(key)?)
            .map_err(|e| {
                Error::invalid_argument(format!(
                    "TLS client certificate {} and key {} do not go together: {e}",
                    cert.display(),
                    key.display()
                ))
            }),
        (None, None) => Ok(builder.with_no_client_auth()),
        _ => Err(Error::invalid_argument(
            "engine option tls needs both cert and key, or neither",
        )),
    }
}

fn unreadable(what: &str, path: &Path, why: impl std::fmt::Display) -> Error {
    Error::invalid_argument(format!("{what} file {}: {why}", path.display()))
}

fn read(what: &str, path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| unreadable(what, path, e))
}

fn certificates(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>> {
    let pem = read(what, path)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| unreadable(what, path, e))?;
    if certs.is_empty() {
        return Err(unreadable(what, path, "no PEM certificate in it"));
    }
    Ok(certs)
}

fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>> {
    PrivateKeyDer::from_pem_slice(&read("tls.key", path)?)
        .map_err(|e| unreadable("tls.key", path, e))
}

fn roots(ca: Option<&Path>) -> Result<RootCertStore> {
    let mut store = RootCertStore::empty();
    match ca {
        Some(ca) => {
            let (added, _) = store.add_parsable_certificates(certificates(ca, "tls.ca")?);
            if added == 0 {
                return Err(unreadable("tls.ca", ca, "no usable CA certificate in it"));
            }
        }
        None => {
            store.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
        }
    }
    Ok(store)
}

/// `insecureSkipVerify`: any server certificate is taken (its signatures still checked).
#[derive(Debug)]
struct NoVerification(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.0.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.0.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// The TLS failure somewhere in an error's causes, described; `None` when TLS is not to
/// blame. rustls's errors travel inside `io::Error`s (nested, through hyper-rustls and
/// tokio-rustls), whose `source` skips what they wrap, so those are opened too.
pub fn tls_failure(err: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut current = Some(err);
    while let Some(e) = current {
        if let Some(tls) = e.downcast_ref::<rustls::Error>() {
            return Some(explain(tls));
        }
        let mut wrapped = e.downcast_ref::<std::io::Error>();
        while let Some(inner) = wrapped.and_then(std::io::Error::get_ref) {
            if let Some(tls) = inner.downcast_ref::<rustls::Error>() {
                return Some(explain(tls));
            }
            wrapped = inner.downcast_ref::<std::io::Error>();
        }
        current = e.source();
    }
    None
}

/// What went wrong, in words, with rustls's own wording after it.
fn explain(err: &rustls::Error) -> String {
    use rustls::{AlertDescription as Alert, CertificateError as Cert, Error as E};
    let what = match err {
        E::InvalidCertificate(Cert::UnknownIssuer | Cert::BadSignature) => {
            "the server's certificate is not signed by a trusted CA (tls.ca)"
        }
        E::InvalidCertificate(Cert::NotValidForName | Cert::NotValidForNameContext { .. }) => {
            "the server's certificate is not for this host name"
        }
        E::InvalidCertificate(Cert::Expired | Cert::ExpiredContext { .. }) => {
            "the server's certificate has expired"
        }
        E::InvalidCertificate(_) => "the server's certificate was refused",
        E::AlertReceived(
            Alert::BadCertificate
            | Alert::CertificateRequired
            | Alert::UnknownCA
            | Alert::CertificateUnknown
            | Alert::AccessDenied,
        ) => "the server refused the client certificate (or its absence: tls.cert, tls.key)",
        E::AlertReceived(_) => "the server broke off the handshake",
        _ => "the handshake failed",
    };
    format!("{what}: {err}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn missing_files_are_invalid_and_named() {
        let tls = TlsOptions {
            ca: Some("/nonexistent/ca.pem".into()),
            ..Default::default()
        };
        let err = client_config(&tls).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument);
        assert!(
            err.message.contains("/nonexistent/ca.pem"),
            "{}",
            err.message
        );

        let dir = std::env::temp_dir().join(format!("ci-tls-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let junk = dir.join("ca.pem");
        std::fs::write(&junk, "not a certificate").unwrap();
        let tls = TlsOptions {
            ca: Some(junk.clone()),
            ..Default::default()
        };
        let err = client_config(&tls).unwrap_err();
        assert!(err.message.contains("ca.pem"), "{}", err.message);
        let half = TlsOptions {
            cert: Some(junk),
            ..Default::default()
        };
        assert_eq!(
            client_config(&half).unwrap_err().code,
            ErrorCode::InvalidArgument
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn skip_verify_needs_no_files() {
        let tls = TlsOptions {
            insecure_skip_verify: true,
            ..Default::default()
        };
        assert!(client_config(&tls).is_ok());
    }

    #[test]
    fn tls_errors_are_found_inside_io_errors() {
        let io = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer),
        );
        let nested = std::io::Error::other(io);
        let why = tls_failure(&nested).unwrap();
        assert!(why.contains("not signed by a trusted CA"), "{why}");
        let plain = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert!(tls_failure(&plain).is_none());
    }
}
