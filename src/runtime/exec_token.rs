//! The token that marks every process of one exec of ours (an environment entry the
//! exec's processes inherit), by which its whole tree is found and signalled inside the
//! container.

/// Environment variable whose value marks every process of one exec.
pub const EXEC_TOKEN_VAR: &str = "CONTAINER_ISOLATION_EXEC";

pub fn new_exec_token() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

pub fn token_entry(token: &str) -> String {
    format!("{EXEC_TOKEN_VAR}={token}")
}
