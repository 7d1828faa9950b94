//! Building a devcontainer.json `build` through the Engine API: the context directory as a
//! tar streamed to the engine (memory bounded whatever the context's size), the Dockerfile
//! inside it, build args and target, the image labelled as ours; the build's lines go out
//! as progress. Its bases are pulled before (`ImageSupply::ensure_bases`).

use std::collections::HashMap;
use std::io::Write;

use bytes::Bytes;

use bollard::query_parameters::BuildImageOptionsBuilder;
use futures_util::StreamExt;

use super::image_supply::{DerivedKind, ImageSupply};
use crate::devcontainer::BuildConfig;
use crate::engine::{chunk_channel, from_bollard, ChunkSender, Engine};
use crate::error::{Error, ErrorCode, Result};
use crate::progress::{Phase, Progress};

/// Where a Dockerfile outside the context is put inside the context's archive.
const OUTSIDE_DOCKERFILE: &str = ".container-isolation.Dockerfile";

/// The context directory (symlinks archived as links, never followed) with the Dockerfile,
/// written by a blocking task into `out`. Returns the Dockerfile's name in the archive.
fn write_context(build: &BuildConfig, out: ChunkSender) -> std::io::Result<()> {
    let mut archive = tar::Builder::new(out);
    archive.follow_symlinks(false);
    archive.append_dir_all(".", &build.context)?;
    if build.dockerfile.strip_prefix(&build.context).is_err() {
        archive.append_path_with_name(&build.dockerfile, OUTSIDE_DOCKERFILE)?;
    }
    archive.into_inner()?.flush()
}

fn dockerfile_in_context(build: &BuildConfig) -> String {
    match build.dockerfile.strip_prefix(&build.context) {
        Ok(inside) => inside.to_string_lossy().into_owned(),
        Err(_) => OUTSIDE_DOCKERFILE.to_string(),
    }
}

/// Builds the image and tags it `tag`. `build`'s paths are canonical and were checked
/// against the project and the host's trust.
pub async fn build_image(
    engine: &Engine,
    build: &BuildConfig,
    tag: &str,
    platform: Option<&str>,
    (supply, kind): (&ImageSupply, DerivedKind),
) -> Result<()> {
    let context_error = |e: String| {
        Error::new(
            ErrorCode::Devcontainer,
            format!("build context {}: {e}", build.context.display()),
        )
    };
    let (out, body) = chunk_channel();
    let to_archive = build.clone();
    let writer = tokio::task::spawn_blocking(move || write_context(&to_archive, out));
    let dockerfile = dockerfile_in_context(build);
    let args: HashMap<String, String> = build.args.clone().into_iter().collect();
    let labels = supply.labels(tag, kind);
    let mut options = BuildImageOptionsBuilder::default()
        .dockerfile(&dockerfile)
        .t(tag)
        .rm(true)
        .buildargs(&args)
        .labels(&labels);
    if let Some(target) = &build.target {
        options = options.target(target);
    }
    if let Some(platform) = platform {
        options = options.platform(platform);
    }
    let subject = format!("build of {}", build.dockerfile.display());
    let progress = (&supply.progress, kind.phase());
    let failure = run_build(engine, options.build(), body, &subject, progress)
        .await
        .err();
    let written = writer.await.map_err(|e| context_error(e.to_string()))?;
    if let Some(err) = failure {
        return Err(err);
    }
    written.map_err(|e| context_error(e.to_string()))
}

/// The images a classic build committed for its steps, read from its log: not `FROM`'s
/// (the base) and not cached ones (an earlier build's). A failed build leaves them behind.
/// Docker writes `Step 2/4 : ENV A=1` and ` ---> 0ee2273e2ca4` (`---> Using cache`
/// before a cached one); Podman `STEP 2/4: ENV A=1` and `--> 906c5ffc0a1` (`--> Using
/// cache <id>` before a cached one).
#[derive(Default)]
struct StepImages {
    ids: Vec<String>,
    from_step: bool,
    cached: bool,
    partial: String,
}

impl StepImages {
    fn read(&mut self, text: &str) {
        self.partial.push_str(text);
        while let Some(end) = self.partial.find('\n') {
            let line: String = self.partial.drain(..=end).collect();
            let line = line.trim();
            let step = line
                .strip_prefix("Step ")
                .or_else(|| line.strip_prefix("STEP "));
            let id = line
                .strip_prefix("---> ")
                .or_else(|| line.strip_prefix("--> "));
            if let Some(step) = step {
                self.from_step = step
                    .split_once(": ")
                    .is_some_and(|(_, i)| i.trim().to_ascii_uppercase().starts_with("FROM"));
                self.cached = false;
            } else if id.is_some_and(|id| id.starts_with("Using cache")) {
                self.cached = true;
            } else if let Some(id) = id {
                let is_id = id.len() >= 11 && id.bytes().all(|b| b.is_ascii_hexdigit());
                if is_id && !self.from_step && !self.cached {
                    self.ids.push(id.to_string());
                }
            }
        }
        if self.partial.len() > 64 * 1024 {
            self.partial.clear();
        }
    }

    /// Removes them, last first (an image still used by another is kept).
    async fn remove(self, engine: &Engine) {
        for id in self.ids.iter().rev() {
            let _ = engine
                .docker()
                .remove_image(
                    id,
                    None::<bollard::query_parameters::RemoveImageOptions>,
                    None,
                )
                .await;
        }
    }
}

/// Each complete line of a build's output as a progress event of `phase`.
#[derive(Default)]
struct BuildLines {
    partial: String,
}

impl BuildLines {
    fn read(&mut self, text: &str, (progress, phase): (&Progress, Phase)) {
        if !progress.is_reporting() {
            return;
        }
        self.partial.push_str(text);
        while let Some(end) = self.partial.find('\n') {
            let line: String = self.partial.drain(..=end).collect();
            let line = line.trim();
            if !line.is_empty() {
                progress.stream(phase, line, None);
            }
        }
        if self.partial.len() > 64 * 1024 {
            self.partial.clear();
        }
    }
}

/// Sends one build to the engine and follows its progress to the end, each line reported
/// as `progress`; a failure carries the end of the build log and leaves none of the
/// build's step images behind.
pub async fn run_build(
    engine: &Engine,
    options: bollard::query_parameters::BuildImageOptions,
    body: impl futures_util::Stream<Item = Bytes> + Send + 'static,
    subject: &str,
    progress: (&Progress, Phase),
) -> Result<()> {
    let body = bollard::body_stream(body);
    let mut stream = engine.docker().build_image(options, None, Some(body));
    let mut log = String::new();
    let mut steps = StepImages::default();
    let mut lines = BuildLines::default();
    let mut failure = None;
    while let Some(item) = stream.next().await {
        let info = match item {
            Ok(info) => info,
            Err(bollard::errors::Error::DockerStreamError { error }) => {
                failure = Some(error);
                break;
            }
            Err(e) => return Err(engine.annotate(from_bollard(e, subject))),
        };
        if let Some(text) = info.stream {
            steps.read(&text);
            lines.read(&text, progress);
            log.push_str(&text);
            keep_tail(&mut log);
        }
        if let Some(detail) = info.error_detail {
            failure = Some(detail.message.unwrap_or_default());
            break;
        }
    }
    drop(stream);
    progress.0.finish(progress.1, None);
    let Some(message) = failure else {
        return Ok(());
    };
    steps.remove(engine).await;
    Err(Error::new(
        ErrorCode::Devcontainer,
        format!("{subject} failed: {message}\n{}", tail(&log)),
    ))
}

/// The build log is the image's to write: only its end is kept.
fn keep_tail(log: &mut String) {
    const KEEP: usize = 64 * 1024;
    if log.len() > 2 * KEEP {
        let mut cut = log.len() - KEEP;
        while !log.is_char_boundary(cut) {
            cut += 1;
        }
        log.drain(..cut);
    }
}

fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(10)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_images_skip_the_base_and_the_cache() {
        let mut steps = StepImages::default();
        for chunk in [
            "Step 1/4 : FROM ${_BASE}\n ---> 0ee2273e2ca4\n",
            "Step 2/4 : ENV A=${_F0_E0}\n ---> Using cache\n ---> 111111111111\n",
            "Step 3/4 : ADD features/0.tar /tmp/x/\n ---> 2222222",
            "22222\nStep 4/4 : RUN false\n ---> Running in 333333333333\n",
        ] {
            steps.read(chunk);
        }
        assert_eq!(steps.ids, ["222222222222"]);
        let mut podman = StepImages::default();
        podman.read(
            "STEP 1/4: FROM container-isolation-test:busybox\nSTEP 2/4: ENV A=1\n\
             --> Using cache 906c5ffc0a1c7266f3c6\n--> 906c5ffc0a1\nSTEP 3/4: RUN echo hi\n\
             --> dc30e2fcde2\nSTEP 4/4: RUN false\n",
        );
        assert_eq!(podman.ids, ["dc30e2fcde2"]);
    }
}
