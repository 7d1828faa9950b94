//! The session agent seen from the host: finding its binary for a container's architecture,
//! putting it into a container, one connection per container (over the exec stream or the
//! direct line), and the commands and file operations carried over it, as the container
//! user whose ids `user_ids` resolves; the direct line offered to the egress relay too
//! (`offer_line`); terminals (`AgentTerminal`).

mod agent_accounts;
mod agent_binary;
mod agent_channel;
mod agent_choice;
mod agent_connection;
mod agent_errors;
mod agent_exec;
mod agent_files;
mod agent_frames;
mod agent_health;
mod agent_line;
mod agent_lookup;
mod agent_pool;
mod agent_process;
mod agent_reading;
mod agent_request;
mod agent_routes;
mod agent_terminal;
mod agent_upload;
mod agent_writer;
mod configured_user;
mod line_listener;
mod line_offer;
mod line_peer;
mod shared_line;
mod user_ids;

pub use agent_accounts::{agent_account_file, connection_user};
pub use agent_binary::{agent_binary, disabled, AgentBinary};
pub use agent_channel::{exec_output, AgentChannel, AgentOutput, AgentStop};
pub use agent_choice::{agent_for_new_container, image_arch, platform_arch};
pub use agent_connection::AgentConnection;
pub use agent_errors::errno_code;
pub use agent_exec::{run_buffered, spawn_for};
pub use agent_files::{AgentFiles, AgentReply};
pub use agent_frames::AgentFrames;
pub use agent_line::{Line, LineFrames, LineRequest};
pub use agent_lookup::{AgentArch, AGENT_ENV};
pub use agent_pool::{
    agent_access, agent_for, agent_for_inspected, agent_if, close_container, move_agent,
    AgentAccess,
};
pub use agent_process::{AgentProcess, ProcessControl, ProcessEvent, ProcessExit};
pub use agent_request::{AgentRequest, RequestSender};
pub use agent_terminal::{AgentTerminal, TerminalControl};
pub use agent_writer::FrameSink;
pub use configured_user::ConfiguredUser;
pub use container_isolation_agent::protocol::{Creds, FileKind, Spawn, Stat};
pub use shared_line::{offer_line, NoLine};
pub use user_ids::{not_readable, resolve_user, AccountReader, UserIds, ACCOUNT_FILE_LIMIT};
