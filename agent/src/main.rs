//! The agent's entry point: `serve` (the default) speaks the protocol on stdin/stdout;
//! `reaper-kill` is what a command's reaper execs to kill its tree when `serve` is gone;
//! `relay` carries the session's network connections (see `relay`).

mod creds;
mod detached;
mod files;
mod frame_out;
mod launch;
mod process;
mod reaper;
mod reaper_report;
mod relay;
mod relay_stream;
mod reply_window;
mod serve;
mod tree;
mod write;

fn main() {
    let mode = std::env::args().nth(1);
    let code = match mode.as_deref() {
        None | Some("serve") => serve::run(),
        Some("reaper-kill") => reaper::kill_mode(),
        Some("relay") => relay::run(&std::env::args().skip(2).collect::<Vec<_>>()),
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
