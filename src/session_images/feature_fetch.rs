//! Fetching a feature published as an OCI artifact: its manifest (bounded, checked
//! against a pinned digest) and its one `application/vnd.devcontainers.layer.v1+tar`
//! layer, held in memory up to the feature size limit and verified against its digest.
//! Plain HTTP only for a loopback registry; credentials from the host's docker config
//! (`auths` or a credential helper, as for image pulls).
//!
//! `oci-client` does the registry's token handshake and the blob download (digest
//! verified); the manifest is read here, because the crate reads a manifest's body whole
//! whatever its size.

use futures_util::StreamExt;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::manifest::{OciImageManifest, IMAGE_MANIFEST_MEDIA_TYPE, OCI_IMAGE_MEDIA_TYPE};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference, RegistryOperation};

use super::feature_source::{from_layer, sha256_digest, FeatureContent, FEATURE_SIZE_LIMIT};
use crate::devcontainer::OciRef;
use crate::error::{Error, ErrorCode, Result};
use crate::registry_auth::credentials_for;

pub const LAYER_MEDIA_TYPE: &str = "application/vnd.devcontainers.layer.v1+tar";
/// The most read of a manifest.
const MANIFEST_LIMIT: usize = 1 << 20;

fn refused(oci: &OciRef, why: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::Devcontainer, format!("feature {oci}: {why}"))
}

fn scheme(oci: &OciRef) -> &'static str {
    if oci.is_loopback() {
        "http"
    } else {
        "https"
    }
}

/// The manifest's bytes, read up to `MANIFEST_LIMIT`, with a pinned digest checked.
async fn fetch_manifest(
    oci: &OciRef,
    token: Option<String>,
    basic: Option<(&str, &str)>,
) -> Result<Vec<u8>> {
    let reference = oci.digest.as_deref().unwrap_or(&oci.tag);
    let url = format!(
        "{}://{}/v2/{}/manifests/{reference}",
        scheme(oci),
        oci.registry,
        oci.repository
    );
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .https_only(!oci.is_loopback())
        .build()
        .map_err(|e| refused(oci, e))?;
    let mut request = http.get(&url).header(
        "Accept",
        format!("{OCI_IMAGE_MEDIA_TYPE}, {IMAGE_MANIFEST_MEDIA_TYPE}"),
    );
    if let Some(token) = token {
        request = request.bearer_auth(token);
    } else if let Some((user, password)) = basic {
        request = request.basic_auth(user, Some(password));
    }
    let mut response = request
        .send()
        .await
        .map_err(|e| refused(oci, format_args!("manifest: {e}")))?;
    if !response.status().is_success() {
        return Err(refused(
            oci,
            format_args!(
                "the registry answered {} for its manifest",
                response.status()
            ),
        ));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| refused(oci, format_args!("manifest: {e}")))?
    {
        if body.len() + chunk.len() > MANIFEST_LIMIT {
            return Err(refused(
                oci,
                format_args!("its manifest is larger than {MANIFEST_LIMIT} bytes"),
            ));
        }
        body.extend_from_slice(&chunk);
    }
    if let Some(pinned) = &oci.digest {
        let actual = sha256_digest(&body);
        if &actual != pinned {
            return Err(refused(
                oci,
                format_args!("its manifest's digest is {actual}, not the pinned {pinned}"),
            ));
        }
    }
    Ok(body)
}

/// The feature's layer descriptor, checked: the devcontainers media type, a sha256
/// digest, a size within the limit.
fn feature_layer(oci: &OciRef, manifest: &[u8]) -> Result<oci_client::manifest::OciDescriptor> {
    let manifest: OciImageManifest = serde_json::from_slice(manifest).map_err(|e| {
        refused(
            oci,
            format_args!("its manifest is not an image manifest: {e}"),
        )
    })?;
    let layer = manifest
        .layers
        .into_iter()
        .find(|l| l.media_type == LAYER_MEDIA_TYPE)
        .ok_or_else(|| {
            refused(
                oci,
                format_args!("its manifest has no {LAYER_MEDIA_TYPE} layer"),
            )
        })?;
    let hex = layer.digest.strip_prefix("sha256:").unwrap_or("");
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(refused(
            oci,
            format_args!("its layer digest '{}' is not a sha256 digest", layer.digest),
        ));
    }
    if layer.size < 0 || layer.size as u64 > FEATURE_SIZE_LIMIT {
        return Err(refused(
            oci,
            format_args!(
                "its layer is larger than {FEATURE_SIZE_LIMIT} bytes ({} declared)",
                layer.size
            ),
        ));
    }
    Ok(layer)
}

/// Fetches the feature `oci` names, verified, its files never written to the host.
pub async fn fetch_feature(oci: &OciRef) -> Result<FeatureContent> {
    let reference = match &oci.digest {
        Some(d) => Reference::with_digest(oci.registry.clone(), oci.repository.clone(), d.clone()),
        None => Reference::with_tag(
            oci.registry.clone(),
            oci.repository.clone(),
            oci.tag.clone(),
        ),
    };
    let protocol = if oci.is_loopback() {
        ClientProtocol::HttpsExcept(vec![oci.registry.clone()])
    } else {
        ClientProtocol::Https
    };
    let client = Client::new(ClientConfig {
        protocol,
        ..Default::default()
    });
    let credentials = credentials_for(&oci.registry).await?;
    let basic = credentials.as_ref().and_then(|c| c.basic());
    let auth = match basic {
        Some((user, password)) => RegistryAuth::Basic(user.into(), password.into()),
        None => RegistryAuth::Anonymous,
    };
    let token = client
        .auth(&reference, &auth, RegistryOperation::Pull)
        .await
        .map_err(|e| {
            let shown = e.to_string();
            let shown = credentials
                .as_ref()
                .map_or(shown.clone(), |c| c.redact(&shown));
            refused(oci, format_args!("registry authentication: {shown}"))
        })?;
    let manifest = fetch_manifest(oci, token, basic).await?;
    let layer = feature_layer(oci, &manifest)?;
    let declared = layer.size as usize;
    let mut stream = client
        .pull_blob_stream(&reference, &layer)
        .await
        .map_err(|e| refused(oci, format_args!("its layer: {e}")))?
        .stream;
    let mut tar = Vec::with_capacity(declared);
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| refused(oci, format_args!("its layer: {e}")))?;
        if tar.len() + chunk.len() > declared {
            return Err(refused(
                oci,
                format_args!("its layer is larger than the {declared} bytes its manifest declares"),
            ));
        }
        tar.extend_from_slice(&chunk);
    }
    drop(stream);
    let actual = sha256_digest(&tar);
    if actual != layer.digest || tar.len() != declared {
        return Err(refused(
            oci,
            format_args!(
                "its layer's digest is {actual} ({} bytes), not {} ({declared} bytes)",
                tar.len(),
                layer.digest
            ),
        ));
    }
    let shown = oci.to_string();
    tokio::task::spawn_blocking(move || from_layer(tar, actual, &shown))
        .await
        .map_err(|e| refused(oci, e))?
}
