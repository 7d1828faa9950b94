//! The derived image a session's features are installed in: a generated Dockerfile `FROM`
//! the base image with one step per feature in install order, built through the Engine
//! API from a context held in memory, labelled `devcontainer.metadata`, and tagged by a
//! hash of everything that goes into it so that an unchanged set is never rebuilt.
//!
//! No value from a config, a feature or an image is written into the Dockerfile: names
//! are checked identifiers and values travel as build args.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use bollard::query_parameters::BuildImageOptionsBuilder;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::feature_set::{resolve_features, ResolvedFeature};
use super::image_build::run_build;
use super::image_supply::{DerivedKind, ImageSupply};
use crate::engine::{find_image, image_present, Engine};
use crate::error::{Error, ErrorCode, Result};
use crate::session_settings::{process_env, SessionSettings};

pub const METADATA_LABEL: &str = "devcontainer.metadata";
/// Changes whenever the generated Dockerfile or label does, so older cached images are not
/// reused.
const RECIPE: &str = "features-v2";
/// The most read of the base image's `devcontainer.metadata` label.
const LABEL_LIMIT: usize = 1 << 20;

const INSTALL_SCRIPT: &str = r#"#!/bin/sh
set -e
home_of() {
    while IFS=: read -r name _ _ _ _ home _; do
        if [ "$name" = "$1" ]; then printf '%s\n' "$home"; return; fi
    done < /etc/passwd
    if [ "$1" = root ]; then echo /root; else echo "/home/$1"; fi
}
_REMOTE_USER_HOME=$(home_of "$_REMOTE_USER")
_CONTAINER_USER_HOME=$(home_of "$_CONTAINER_USER")
export _REMOTE_USER _CONTAINER_USER _REMOTE_USER_HOME _CONTAINER_USER_HOME
cd "$1"
chmod +x ./install.sh
./install.sh
"#;

const FEATURES_DIR: &str = "/tmp/dev-container-features";

fn refused(why: impl Into<String>) -> Error {
    Error::new(ErrorCode::Devcontainer, why.into())
}

fn is_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// `$NAME`, `${NAME}` and `${containerEnv:NAME}` replaced from `env` (unset: empty), as a
/// Dockerfile's `ENV` would.
fn expand(value: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, used) = if let Some(braced) = after.strip_prefix('{') {
            match braced.find('}') {
                // The reference reads `${containerEnv:NAME}` as `${NAME}` here.
                Some(end) => {
                    let inner = &braced[..end];
                    (
                        inner.strip_prefix("containerEnv:").unwrap_or(inner),
                        end + 2,
                    )
                }
                None => ("", 0),
            }
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], end)
        };
        if name.is_empty() || !is_env_name(name) {
            out.push('$');
            rest = after;
            continue;
        }
        out.push_str(env.get(name).map_or("", String::as_str));
        rest = &after[used..];
    }
    out.push_str(rest);
    out
}

/// What the build needs to know of the base image.
struct BaseImage {
    id: String,
    user: String,
    env: BTreeMap<String, String>,
    metadata: Vec<Value>,
}

async fn inspect_base(engine: &Engine, name: &str) -> Result<BaseImage> {
    let subject = format!("image {name}");
    let image = find_image(engine, name).await?.ok_or_else(|| {
        Error::new(
            ErrorCode::ImageNotFound,
            format!(
                "{subject}: the engine {} has no such image",
                engine.endpoint()
            ),
        )
    })?;
    let config = image.config.unwrap_or_default();
    let env = process_env(config.env);
    let label = config
        .labels
        .unwrap_or_default()
        .remove(METADATA_LABEL)
        .unwrap_or_default();
    let metadata = if label.trim().is_empty() {
        Vec::new()
    } else if label.len() > LABEL_LIMIT {
        return Err(refused(format!(
            "{subject}: its {METADATA_LABEL} label is larger than {LABEL_LIMIT} bytes"
        )));
    } else {
        match serde_json::from_str::<Value>(&label) {
            Ok(Value::Array(entries)) => entries,
            Ok(entry @ Value::Object(_)) => vec![entry],
            _ => {
                return Err(refused(format!(
                    "{subject}: its {METADATA_LABEL} label is not a JSON array or object"
                )))
            }
        }
    };
    Ok(BaseImage {
        id: image.id.unwrap_or_else(|| name.to_string()),
        user: config.user.unwrap_or_default(),
        env,
        metadata,
    })
}

/// One `devcontainer.metadata` entry for a feature, in the reference's format.
fn metadata_entry(feature: &ResolvedFeature) -> Value {
    let m = &feature.content.metadata;
    let mut entry = Map::new();
    entry.insert("id".into(), json!(feature.request.reference));
    // A feature's `containerEnv` is in the image already (`ENV`, expanded by the build);
    // the reference leaves it out of the label too, where `${PATH}` would stay verbatim.
    if !m.mounts.is_empty() {
        entry.insert("mounts".into(), json!(m.mounts));
    }
    if !m.cap_add.is_empty() {
        entry.insert("capAdd".into(), json!(m.cap_add));
    }
    if !m.security_opt.is_empty() {
        entry.insert("securityOpt".into(), json!(m.security_opt));
    }
    for (key, value) in [("privileged", m.privileged), ("init", m.init)] {
        if let Some(v) = value {
            entry.insert(key.into(), json!(v));
        }
    }
    if let Some(e) = &m.entrypoint {
        entry.insert("entrypoint".into(), json!(e));
    }
    for (key, command) in &m.lifecycle {
        entry.insert(key.clone(), command.clone());
    }
    if let Some(c) = &m.customizations {
        entry.insert("customizations".into(), c.clone());
    }
    Value::Object(entry)
}

/// The generated build: Dockerfile, build args, and the tag its inputs hash to.
struct Recipe {
    dockerfile: String,
    args: HashMap<String, String>,
    tag: String,
}

fn recipe(base: &BaseImage, features: &[ResolvedFeature], users: (&str, &str)) -> Result<Recipe> {
    let mut args = HashMap::from([
        ("_BASE".to_string(), base.id.clone()),
        ("_REMOTE_USER".to_string(), users.0.to_string()),
        ("_CONTAINER_USER".to_string(), users.1.to_string()),
        (
            "_RESTORE_USER".to_string(),
            if base.user.is_empty() {
                "root".into()
            } else {
                base.user.clone()
            },
        ),
    ]);
    let mut file = String::from(
        "ARG _BASE\nFROM ${_BASE}\nUSER root\nARG _REMOTE_USER\nARG _CONTAINER_USER\nARG _RESTORE_USER\n",
    );
    file.push_str(&format!(
        "COPY install-feature.sh {FEATURES_DIR}/install-feature.sh\n"
    ));
    let mut env = base.env.clone();
    let mut hashed = vec![json!([RECIPE, base.id, users.0, users.1, base.user])];
    for (n, feature) in features.iter().enumerate() {
        let reference = &feature.request.reference;
        for (k, (name, value)) in feature.content.metadata.container_env.iter().enumerate() {
            if !is_env_name(name) {
                return Err(refused(format!(
                    "feature {reference}: containerEnv name '{name}' is not a variable name"
                )));
            }
            let value = expand(value, &env);
            let arg = format!("_F{n}_E{k}");
            file.push_str(&format!("ARG {arg}\nENV {name}=${{{arg}}}\n"));
            args.insert(arg, value.clone());
            env.insert(name.clone(), value);
        }
        file.push_str(&format!("ADD features/{n}.tar {FEATURES_DIR}/{n}/\n"));
        let options = feature.option_env();
        let mut run = String::from("RUN");
        for (k, (name, value)) in options.iter().enumerate() {
            if !is_env_name(name) {
                return Err(refused(format!(
                    "feature {reference}: option '{name}' has no usable variable name"
                )));
            }
            let arg = format!("_F{n}_O{k}");
            file.push_str(&format!("ARG {arg}\n"));
            run.push_str(&format!(" {name}=\"${arg}\""));
            args.insert(arg, value.clone());
        }
        run.push_str(&format!(
            " /bin/sh {FEATURES_DIR}/install-feature.sh {FEATURES_DIR}/{n}\n"
        ));
        file.push_str(&run);
        hashed.push(json!([
            reference,
            feature.content.digest,
            options,
            feature.content.metadata.container_env
        ]));
    }
    file.push_str("USER ${_RESTORE_USER}\n");
    let digest = hex::encode(Sha256::digest(Value::Array(hashed).to_string()));
    Ok(Recipe {
        dockerfile: file,
        args,
        tag: format!("container-isolation-features-{}:latest", &digest[..32]),
    })
}

fn context(recipe: &Recipe, features: &[ResolvedFeature]) -> std::io::Result<Vec<u8>> {
    let mut archive = tar::Builder::new(Vec::new());
    let mut add = |name: &str, bytes: &[u8], mode: u32| {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(mode);
        header.set_mtime(0);
        archive.append_data(&mut header, name, bytes)
    };
    add("Dockerfile", recipe.dockerfile.as_bytes(), 0o644)?;
    add("install-feature.sh", INSTALL_SCRIPT.as_bytes(), 0o755)?;
    for (n, feature) in features.iter().enumerate() {
        add(&format!("features/{n}.tar"), &feature.content.tar, 0o644)?;
    }
    archive.into_inner()
}

/// The image the session's container is made from: `base` itself without features, else
/// the derived image, built unless an identical one is already there.
pub async fn ensure_feature_image(
    engine: &Engine,
    base: &str,
    settings: &SessionSettings,
    project: &Path,
    supply: &ImageSupply,
) -> Result<String> {
    if settings.features.is_empty() {
        return Ok(base.to_string());
    }
    let features = resolve_features(
        project,
        &settings.features,
        &settings.feature_install_order,
        &settings.feature_registries,
    )
    .await?;
    let base_image = inspect_base(engine, base).await?;
    let remote = settings.remote_user().unwrap_or("root");
    let container = settings.container_user.as_deref().unwrap_or("root");
    let recipe = recipe(&base_image, &features, (remote, container))?;
    if image_present(engine, &recipe.tag).await? {
        return Ok(recipe.tag);
    }
    let mut metadata = base_image.metadata.clone();
    metadata.extend(features.iter().map(metadata_entry));
    let mut labels = supply.labels(&recipe.tag, DerivedKind::Features);
    labels.insert(
        METADATA_LABEL.to_string(),
        Value::Array(metadata).to_string(),
    );
    let body =
        context(&recipe, &features).map_err(|e| refused(format!("features of {base}: {e}")))?;
    let options = BuildImageOptionsBuilder::default()
        .dockerfile("Dockerfile")
        .t(&recipe.tag)
        .rm(true)
        .forcerm(true)
        .buildargs(&recipe.args)
        .labels(&labels)
        .build();
    let subject = format!("build of the features image for {base}");
    let body = futures_util::stream::once(std::future::ready(bytes::Bytes::from(body)));
    let progress = (&supply.progress, DerivedKind::Features.phase());
    run_build(engine, options, body, &subject, progress).await?;
    Ok(recipe.tag)
}

#[cfg(test)]
mod tests {
    use super::super::feature_source::FeatureContent;
    use super::*;
    use crate::devcontainer::{FeatureMetadata, FeatureRequest, FeatureSource, OptionValue};

    fn feature(reference: &str, greeting: &str) -> ResolvedFeature {
        ResolvedFeature {
            request: FeatureRequest {
                reference: reference.to_string(),
                source: FeatureSource::Local {
                    path: reference.into(),
                },
                options: BTreeMap::from([(
                    "greeting".to_string(),
                    OptionValue::String(greeting.to_string()),
                )]),
            },
            content: FeatureContent {
                tar: Vec::new(),
                digest: "sha256:00".into(),
                metadata: FeatureMetadata {
                    id: "f".into(),
                    container_env: BTreeMap::from([(
                        "PATH".to_string(),
                        "/opt/f\nRUN evil:${PATH}".to_string(),
                    )]),
                    ..Default::default()
                },
            },
        }
    }

    fn base() -> BaseImage {
        BaseImage {
            id: "sha256:abc".into(),
            user: "agent\nRUN evil".into(),
            env: BTreeMap::from([("PATH".to_string(), "/usr/bin".to_string())]),
            metadata: Vec::new(),
        }
    }

    #[test]
    fn no_value_reaches_the_dockerfile_and_the_tag_follows_the_options() {
        let features = [feature("./a", "x\"; RUN evil; \"")];
        let r = recipe(&base(), &features, ("agent", "root")).unwrap();
        assert!(!r.dockerfile.contains("evil"), "{}", r.dockerfile);
        assert!(
            r.dockerfile.contains("GREETING=\"$_F0_O0\""),
            "{}",
            r.dockerfile
        );
        assert_eq!(r.args["_F0_E0"], "/opt/f\nRUN evil:/usr/bin");
        assert_eq!(r.args["_RESTORE_USER"], "agent\nRUN evil");
        let again = recipe(&base(), &features, ("agent", "root")).unwrap();
        assert_eq!(again.tag, r.tag);
        let other = recipe(&base(), &[feature("./a", "y")], ("agent", "root")).unwrap();
        assert_ne!(other.tag, r.tag);
        let users = recipe(&base(), &features, ("root", "root")).unwrap();
        assert_ne!(users.tag, r.tag);
    }

    #[test]
    fn env_values_expand_like_a_dockerfile_env() {
        let env = BTreeMap::from([("PATH".to_string(), "/usr/bin".to_string())]);
        assert_eq!(expand("/opt/x:${PATH}", &env), "/opt/x:/usr/bin");
        assert_eq!(expand("$PATH:/a $NOPE|", &env), "/usr/bin:/a |");
        assert_eq!(expand("cost $5 ${", &env), "cost $5 ${");
        assert_eq!(expand("${containerEnv:PATH}:/x", &env), "/usr/bin:/x");
    }
}
