//! The agent's entry point: `serve` (the default) speaks the protocol on stdin/stdout;
//! `reaper-kill` is what a command's reaper execs to kill its tree when `serve` is gone;
//! `relay` carries the session's network connections (see `relay`).
//!
//! The binary runs only inside Linux containers (a static executable uploaded or mounted
//! into each one): it is built of Linux's own calls (`prctl` subreapers, `signalfd`,
//! `setfsuid`, `O_PATH`, `O_TMPFILE`, `close_range`, `getdents64`). Built for any other
//! system, as a darwin check of the workspace does, it is a stub that refuses to run; the
//! crate's library (the protocol and temporary names the host shares) builds everywhere.

/// Declares each module for Linux only.
macro_rules! linux_only {
    ($($module:item)*) => { $( #[cfg(target_os = "linux")] $module )* };
}

linux_only! {
    mod creds;
    mod detached;
    mod fd_pairs;
    mod files;
    mod frame_in;
    mod frame_out;
    mod launch;
    mod line;
    mod process;
    mod reaper;
    mod reaper_report;
    mod relay;
    mod relay_stream;
    mod reply_window;
    mod running;
    mod serve;
    mod terminal;
    mod thread_pool;
    mod tree;
    mod write;
}

#[cfg(target_os = "linux")]
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

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("container-isolation-agent runs only inside Linux containers");
    std::process::exit(2);
}
