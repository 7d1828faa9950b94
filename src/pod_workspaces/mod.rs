//! Session workspaces on a Kubernetes cluster (docs/kubernetes.md): each session its git
//! clone on the host and its Pod, the clone copied into the Pod whenever the Pod starts with a
//! fresh file system, and read back before the host reads it (`changes`, `export`, `stop`,
//! `destroy`). Their network is the egress relay's, as on the engines.

mod pod_checkpoints;
mod pod_delivery;
mod pod_egress;
mod pod_idle;
mod pod_lifecycle;
mod pod_names;
mod pod_pool;
mod pod_ports;
mod pod_reap;
mod pod_running;
mod pod_sessions;
mod pod_settings;
mod pod_tree;

pub use pod_reap::PodReapReport;
pub use pod_sessions::{CreatePodWorkspace, PodWorkspaces, PodWorkspacesOptions};
