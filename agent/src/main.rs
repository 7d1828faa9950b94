//! The agent's entry point: `serve` (the default) speaks the protocol on stdin/stdout;
//! `reaper` is what `serve` runs each command under.

mod creds;
mod files;
mod frame_out;
mod process;
mod reaper;
mod serve;
mod tree;
mod write;

fn main() {
    let mode = std::env::args().nth(1);
    let code = match mode.as_deref() {
        None | Some("serve") => serve::run(),
        Some("reaper") => reaper::run(),
        Some("--version") => {
            println!(
                "container-isolation-agent {} (protocol {})",
                env!("CARGO_PKG_VERSION"),
                container_isolation_agent::protocol::VERSION
            );
            0
        }
        Some(other) => {
            eprintln!("container-isolation-agent: unknown mode '{other}'");
            2
        }
    };
    std::process::exit(code);
}
