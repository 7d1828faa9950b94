//! The session's network under the host's control: a session container has no route out,
//! and every connection it makes goes through the agent's proxy ports inside the container,
//! over the agent's relay channel, to this side, where the policy decides and the host
//! makes the connection itself. Inbound, the same channel carries forwarded ports.
//!
//! The pieces: `egress_rule` (the allow/deny grammar), `address_class` (which addresses are
//! never public), `egress_policy` (a decision for one destination), `http_proxy`, `socks5`
//! and `client_hello` (what a client in the container says first), and the relay itself.

mod address_class;
mod client_hello;
mod destination_gate;
mod egress_policy;
mod egress_rule;
mod egress_settings;
mod engine_gateways;
mod http_proxy;
mod port_forward;
mod proxy_connection;
mod relay_channel;
mod relay_pump;
mod session_relay;
mod socks5;

pub use egress_settings::{
    AskFuture, Egress, EgressAsker, EgressEvent, EgressEvents, EgressMode, EgressRequest,
    EgressSpec,
};
pub use port_forward::{forward_port, PortForward};
pub use relay_channel::RelayChannel;
pub use session_relay::{
    ensure_relay, forget_relay, proxy_environment, set_egress, HTTP_PROXY_PORT, SOCKS_PORT,
};
