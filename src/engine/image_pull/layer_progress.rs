//! A pull's bytes summed over its layers from the engine's messages: each layer's
//! `progressDetail` while it downloads (Docker: `Downloading`; Podman: the same word), its
//! full size once its download is complete. Extraction is not counted (it would count the
//! same layer twice, uncompressed).

use std::collections::BTreeMap;

use bollard::models::CreateImageInfo;

#[derive(Debug, Default, Clone, Copy)]
struct Layer {
    current: u64,
    total: u64,
}

#[derive(Debug, Default)]
pub struct LayerProgress {
    layers: BTreeMap<String, Layer>,
    /// The engine's last status line.
    pub status: String,
}

fn done(status: &str) -> bool {
    matches!(
        status,
        "Download complete" | "Verifying Checksum" | "Extracting" | "Pull complete"
    )
}

impl LayerProgress {
    pub fn read(&mut self, info: &CreateImageInfo) {
        let status = info.status.as_deref().unwrap_or_default();
        if !status.is_empty() {
            self.status = status.to_string();
        }
        let Some(id) = info.id.as_deref().filter(|id| !id.is_empty()) else {
            return;
        };
        let detail = info.progress_detail.as_ref();
        let number = |v: Option<i64>| v.and_then(|n| u64::try_from(n).ok());
        if status == "Downloading" {
            let layer = self.layers.entry(id.to_string()).or_default();
            if let Some(total) = number(detail.and_then(|d| d.total)).filter(|t| *t > 0) {
                layer.total = total;
            }
            if let Some(current) = number(detail.and_then(|d| d.current)) {
                layer.current = current;
            }
        } else if done(status) {
            if let Some(layer) = self.layers.get_mut(id) {
                layer.current = layer.total.max(layer.current);
                layer.total = layer.current;
            }
        }
    }

    /// Bytes so far and in all, over the layers seen downloading.
    pub fn bytes(&self) -> (u64, u64) {
        // A layer whose size is not known yet counts what it read as its size.
        self.layers
            .values()
            .fold((0, 0), |(current, total), layer| {
                (
                    current + layer.current,
                    total + layer.total.max(layer.current),
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bollard::models::ProgressDetail;

    fn message(
        status: &str,
        id: &str,
        current: Option<i64>,
        total: Option<i64>,
    ) -> CreateImageInfo {
        CreateImageInfo {
            id: Some(id.into()),
            status: Some(status.into()),
            progress_detail: Some(ProgressDetail { current, total }),
            ..Default::default()
        }
    }

    #[test]
    fn bytes_sum_over_layers_and_end_at_the_total() {
        let mut p = LayerProgress::default();
        for m in [
            message("Pulling fs layer", "a", None, None),
            message("Already exists", "base", None, None),
            message("Downloading", "a", Some(100), Some(1000)),
            message("Downloading", "b", Some(50), Some(500)),
            message("Downloading", "a", Some(600), Some(1000)),
        ] {
            p.read(&m);
        }
        assert_eq!(p.bytes(), (650, 1500));
        p.read(&message("Verifying Checksum", "a", None, None));
        p.read(&message("Download complete", "a", None, None));
        p.read(&message("Extracting", "a", Some(4000), Some(9000)));
        assert_eq!(p.bytes(), (1050, 1500));
        p.read(&message("Download complete", "b", None, None));
        p.read(&message("Pull complete", "b", None, None));
        assert_eq!(p.bytes(), (1500, 1500));
        assert_eq!(p.status, "Pull complete");
    }

    #[test]
    fn a_layer_without_a_total_counts_what_it_read() {
        let mut p = LayerProgress::default();
        p.read(&message("Downloading", "a", Some(70), Some(-1)));
        assert_eq!(p.bytes(), (70, 70));
        p.read(&message("Download complete", "sha256:unknown", None, None));
        assert_eq!(p.bytes(), (70, 70));
    }
}
