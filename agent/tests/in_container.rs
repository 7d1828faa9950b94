//! The real agent in real containers on this machine's dockerd: the static binary is
//! mounted into a labelled container of each test image, started with `docker exec -i …
//! serve`, and spoken to with the crate's own protocol code. Without a dockerd every test
//! says so and passes; without the binary they fail, naming the command that builds it:
//!
//! ```sh
//! RUSTFLAGS="-C target-feature=+crt-static" cargo build --release \
//!     -p container-isolation-agent --target x86_64-unknown-linux-gnu --target-dir target/agent
//! cargo test -p container-isolation-agent --test in_container
//! ```
//!
//! `CONTAINER_ISOLATION_AGENT_BIN` names another binary to test.

#[path = "in_container/client.rs"]
mod client;
#[path = "in_container/commands.rs"]
mod commands;
#[path = "in_container/files.rs"]
mod files;
#[path = "in_container/kill.rs"]
mod kill;
#[path = "in_container/support.rs"]
mod support;
#[path = "in_container/terminal.rs"]
mod terminal;
