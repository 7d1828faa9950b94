//! What became of one relayed request or tunnel: where it went, whether the policy let it
//! through and why, the bytes each way; reported to the host's `onEvent` once, when it ends.

use std::net::SocketAddr;
use std::time::Instant;

use super::destination_gate::Gate;
use super::egress_settings::EgressEvent;

pub struct Outcome {
    pub host: String,
    pub port: u16,
    pub address: Option<SocketAddr>,
    pub allowed: bool,
    pub reason: String,
    pub up: u64,
    pub down: u64,
    started: Instant,
}

impl Outcome {
    /// A request for `host:port`, asked now; refused until it is let through.
    pub fn new(host: &str, port: u16) -> Outcome {
        Outcome {
            host: host.to_string(),
            port,
            address: None,
            allowed: false,
            reason: String::new(),
            up: 0,
            down: 0,
            started: Instant::now(),
        }
    }

    pub fn report(self, gate: &Gate) {
        gate.report(EgressEvent {
            session_id: gate.session_id(),
            host: self.host,
            port: self.port,
            address: self.address.map(|a| a.ip().to_string()),
            allowed: self.allowed,
            reason: self.reason,
            bytes_up: self.up,
            bytes_down: self.down,
            ms: self.started.elapsed().as_secs_f64() * 1000.0,
        });
    }
}
