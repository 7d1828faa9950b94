//! The egress parsers under fuzz, from `src/egress/`.

#[path = "../../../src/egress/address_class.rs"]
pub mod address_class;
#[path = "../../../src/egress/chunked_body.rs"]
pub mod chunked_body;
#[path = "../../../src/egress/client_hello.rs"]
pub mod client_hello;
#[path = "../../../src/egress/egress_policy.rs"]
pub mod egress_policy;
#[path = "../../../src/egress/egress_rule.rs"]
pub mod egress_rule;
#[path = "../../../src/egress/host_names.rs"]
pub mod host_names;
#[path = "../../../src/egress/http_head.rs"]
pub mod http_head;
#[path = "../../../src/egress/request_guard.rs"]
pub mod request_guard;
#[path = "../../../src/egress/socks5.rs"]
pub mod socks5;
