//! `PortForward`: a container port served on the host, as `Workspaces.forwardPort` gives it.

use std::sync::Arc;

use napi_derive::napi;

use crate::egress;

/// Where to listen for `Workspaces.forwardPort`.
#[napi(object, object_to_js = false)]
pub struct ForwardPortOptions {
    /// The host port; default 0: any free port.
    pub host_port: Option<u32>,
    /// The host address; default `127.0.0.1` (never all interfaces unless asked for).
    pub host_ip: Option<String>,
}

/// A port of a session's container, served on the host through the session's relay.
#[napi]
pub struct PortForward {
    inner: Arc<egress::PortForward>,
}

#[napi]
impl PortForward {
    pub fn from_core(inner: Arc<egress::PortForward>) -> Self {
        PortForward { inner }
    }

    /// The address listened on.
    #[napi(getter)]
    pub fn host_ip(&self) -> String {
        self.inner.host_address.ip().to_string()
    }

    /// The port listened on.
    #[napi(getter)]
    pub fn host_port(&self) -> u32 {
        u32::from(self.inner.host_address.port())
    }

    /// The container port each connection reaches.
    #[napi(getter)]
    pub fn container_port(&self) -> u32 {
        u32::from(self.inner.container_port)
    }

    /// Stops listening; connections already made go on until they end.
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn close(&self) {
        self.inner.close();
    }
}
