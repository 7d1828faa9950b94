//! The session's network under the host's control: a session container has no route out,
//! and every connection it makes goes through the agent's proxy ports inside the container,
//! over the agent's relay channel, to this side, where the policy decides and the host
//! makes the connection itself. Inbound, the same channel carries forwarded ports.
//!
//! The pieces: `egress_rule` (the allow/deny grammar), `address_class` (which addresses are
//! never public), `host_names` (the engines' names for the host), `egress_policy` (a decision for one destination), `destination_gate`
//! (that decision with the lookup and the host's answer), `http_proxy` (every request on a
//! proxy connection, its heads checked first by `request_guard`, `http_head` and
//! `chunked_body`), `socks5` and `client_hello` (what a client in the container says
//! first), `tunnel` and `origin_connection` (the host's own connections), and the relay,
//! which runs wherever a `RelayPlace` can start it (an engine, a cluster's Pods).

pub(crate) mod address_class;
pub(crate) mod chunked_body;
pub(crate) mod client_hello;
mod destination_gate;
pub(crate) mod egress_policy;
pub(crate) mod egress_rule;
mod egress_settings;
mod engine_gateways;
mod hop_by_hop;
pub(crate) mod host_names;
pub(crate) mod http_head;
mod http_proxy;
mod http_upgrade;
mod origin_connection;
mod port_forward;
mod proxy_answer;
mod proxy_connection;
mod relay_channel;
mod relay_dispatch;
mod relay_line;
mod relay_outcome;
mod relay_place;
mod relay_stream;
mod relay_transport;
mod reported_body;
pub(crate) mod request_guard;
mod session_egress;
mod session_forwards;
mod session_relay;
pub(crate) mod socks5;
mod tunnel;

pub use destination_gate::Gateways;
pub use egress_settings::{
    AskFuture, Egress, EgressAsker, EgressEvent, EgressEvents, EgressMode, EgressRequest,
    EgressSpec,
};
pub use port_forward::{forward_port, PortForward};
pub use relay_channel::{Accepted, RelayChannel};
pub use relay_place::{OpenedRelay, RelayPlace};
pub use session_egress::SessionEgress;
pub use session_forwards::SessionForwards;
pub use session_relay::{
    add_no_proxy, ensure_relay, forget_relay, move_relay, proxy_environment, relay_line,
    set_egress, HTTP_PROXY_PORT, SOCKS_PORT,
};
