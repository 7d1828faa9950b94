//! A container directory read back through the archive endpoint (which answers for stopped
//! containers too) into an existing, empty host directory, extracted as untrusted input.

use std::io::Read;
use std::path::PathBuf;

use bollard::query_parameters::DownloadFromContainerOptionsBuilder;
use bytes::Bytes;
use futures_util::StreamExt;
use tokio::sync::mpsc;

use crate::engine::{from_bollard, Engine};
use crate::error::{Error, ErrorCode, Result};
use crate::tar_extract::{extract, ExtractLimits, Extracted};

/// Reads what the download sends, on the extracting thread.
struct ChannelReader {
    receiver: mpsc::Receiver<Bytes>,
    chunk: Bytes,
}

impl Read for ChannelReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.chunk.is_empty() {
            match self.receiver.blocking_recv() {
                Some(chunk) => self.chunk = chunk,
                None => return Ok(0),
            }
        }
        let n = out.len().min(self.chunk.len());
        out[..n].copy_from_slice(&self.chunk.split_to(n));
        Ok(n)
    }
}

/// Writes the tree at `container_dir` into `into` (its own name dropped), within `limits`.
pub async fn download_tree(
    engine: &Engine,
    container: &str,
    container_dir: &str,
    into: PathBuf,
    limits: ExtractLimits,
) -> Result<Extracted> {
    let subject = format!("container '{container}': download of {container_dir}");
    let options = DownloadFromContainerOptionsBuilder::default()
        .path(container_dir)
        .build();
    let mut stream = engine
        .docker()
        .download_from_container(container, Some(options));
    let (sender, receiver) = mpsc::channel::<Bytes>(4);
    let extracting = tokio::task::spawn_blocking(move || {
        let reader = ChannelReader {
            receiver,
            chunk: Bytes::new(),
        };
        extract(reader, &into, 1, limits)
    });
    let mut failed = None;
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(chunk) => {
                if sender.send(chunk).await.is_err() {
                    break;
                }
            }
            Err(err) => {
                failed = Some(engine.annotate(from_bollard(err, &subject)));
                break;
            }
        }
    }
    drop(sender);
    let extracted = extracting
        .await
        .map_err(|e| Error::new(ErrorCode::EngineError, format!("{subject}: {e}")))?;
    match failed {
        Some(err) => Err(err),
        None => extracted,
    }
}
