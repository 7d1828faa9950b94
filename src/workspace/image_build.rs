//! Building a devcontainer.json `build` through the Engine API: the context directory as a
//! tar, the Dockerfile inside it, build args and target; offline as long as `FROM` names a
//! local image (nothing is pulled).

use std::collections::HashMap;
use std::path::Path;

use bollard::query_parameters::BuildImageOptionsBuilder;
use futures_util::StreamExt;

use crate::devcontainer::BuildConfig;
use crate::engine::{from_bollard, Engine};
use crate::error::{Error, ErrorCode, Result};

/// Where a Dockerfile outside the context is put inside the context's archive.
const OUTSIDE_DOCKERFILE: &str = ".container-isolation.Dockerfile";

fn context_archive(build: &BuildConfig) -> Result<(Vec<u8>, String)> {
    let fail = |e: std::io::Error| {
        Error::new(
            ErrorCode::Devcontainer,
            format!("build context {}: {e}", build.context.display()),
        )
    };
    let mut archive = tar::Builder::new(Vec::new());
    archive.follow_symlinks(false);
    archive.append_dir_all(".", &build.context).map_err(fail)?;
    let dockerfile = match build.dockerfile.strip_prefix(&build.context) {
        Ok(inside) => inside.to_string_lossy().into_owned(),
        Err(_) => {
            archive
                .append_path_with_name(&build.dockerfile, OUTSIDE_DOCKERFILE)
                .map_err(fail)?;
            OUTSIDE_DOCKERFILE.to_string()
        }
    };
    Ok((archive.into_inner().map_err(fail)?, dockerfile))
}

/// Builds the image and tags it `tag`.
pub async fn build_image(engine: &Engine, build: &BuildConfig, tag: &str) -> Result<()> {
    if !Path::new(&build.context).is_dir() {
        return Err(Error::new(
            ErrorCode::Devcontainer,
            format!(
                "build context {} is not a directory",
                build.context.display()
            ),
        ));
    }
    let (archive, dockerfile) = context_archive(build)?;
    let args: HashMap<String, String> = build.args.clone().into_iter().collect();
    let mut options = BuildImageOptionsBuilder::default()
        .dockerfile(&dockerfile)
        .t(tag)
        .rm(true)
        .buildargs(&args);
    if let Some(target) = &build.target {
        options = options.target(target);
    }
    let subject = format!("build of {}", build.dockerfile.display());
    let body = bollard::body_full(archive.into());
    let mut stream = engine
        .docker()
        .build_image(options.build(), None, Some(body));
    let mut log = String::new();
    while let Some(item) = stream.next().await {
        let info = item.map_err(|e| engine.annotate(from_bollard(e, &subject)))?;
        if let Some(text) = info.stream {
            log.push_str(&text);
        }
        if let Some(detail) = info.error_detail {
            return Err(Error::new(
                ErrorCode::Devcontainer,
                format!(
                    "{subject} failed: {}\n{}",
                    detail.message.unwrap_or_default(),
                    tail(&log)
                ),
            ));
        }
    }
    Ok(())
}

fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(10)..].join("\n")
}
