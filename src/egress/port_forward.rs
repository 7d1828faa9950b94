//! A port of the container served on the host: a listener here, each connection carried
//! into the container's loopback through the relay (the session needs no network for it).
//! A container made again (a restore) gets the same forwards: they are pointed at its new
//! relay, and each new connection goes there.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use tokio::net::TcpListener;

use super::relay_channel::RelayChannel;
use crate::error::{Error, ErrorCode, Result};

pub struct PortForward {
    pub host_address: SocketAddr,
    pub container_port: u16,
    channel: Arc<Mutex<Arc<RelayChannel>>>,
    task: tokio::task::AbortHandle,
}

impl PortForward {
    /// New connections go through `channel` (the relay of the container made again).
    pub fn retarget(&self, channel: Arc<RelayChannel>) {
        *self.channel.lock().unwrap_or_else(|e| e.into_inner()) = channel;
    }

    /// Stops listening; connections already open go on until they end.
    pub fn close(&self) {
        self.task.abort();
    }
}

impl Drop for PortForward {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Listens on `host_ip:host_port` (0: any free port) for `container_port` (1-65535).
pub async fn forward_port(
    channel: Arc<RelayChannel>,
    container_port: u16,
    host_ip: IpAddr,
    host_port: u16,
) -> Result<PortForward> {
    if container_port == 0 {
        return Err(Error::invalid_argument(
            "forwardPort: the container port must be 1-65535",
        ));
    }
    let listener = TcpListener::bind((host_ip, host_port)).await.map_err(|e| {
        let code = match e.kind() {
            std::io::ErrorKind::AddrInUse => ErrorCode::Eexist,
            std::io::ErrorKind::PermissionDenied => ErrorCode::Eacces,
            _ => ErrorCode::InvalidArgument,
        };
        Error::new(
            code,
            format!("forwarding to port {container_port}: {host_ip}:{host_port}: {e}"),
        )
    })?;
    let host_address = listener
        .local_addr()
        .map_err(|e| Error::new(ErrorCode::EngineError, format!("forwarded port: {e}")))?;
    let current = Arc::new(Mutex::new(channel));
    let theirs = current.clone();
    let task = tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let channel = theirs.lock().unwrap_or_else(|e| e.into_inner()).clone();
            tokio::spawn(async move {
                let _ = socket.set_nodelay(true);
                if let Ok(mut pipe) = channel.dial(container_port).await {
                    let _ = tokio::io::copy_bidirectional(&mut socket, &mut pipe).await;
                }
            });
        }
    });
    Ok(PortForward {
        host_address,
        container_port,
        channel: current,
        task: task.abort_handle(),
    })
}
