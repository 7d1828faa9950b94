//! The container's user as its agent acts for it: the account files read as root through
//! the agent, and the ids of a user spec resolved from them once per connection.

use std::sync::Arc;

use super::agent_connection::AgentConnection;
use super::agent_files::{AgentFiles, AgentReply};
use super::user_ids::{not_readable, resolve_user, AccountReader, UserIds, ACCOUNT_FILE_LIMIT};
use crate::error::{ErrorCode, Result};
use container_isolation_agent::protocol::Creds;

/// `path` read as root through the container's agent, at most `ACCOUNT_FILE_LIMIT` bytes;
/// `Ok(None)` when the agent could not read it for any reason but its size (another way
/// may).
pub async fn agent_account_file(
    connection: &Arc<AgentConnection>,
    path: &str,
) -> Result<Option<Option<Vec<u8>>>> {
    let files = AgentFiles {
        connection: connection.clone(),
        creds: Creds::default(),
    };
    match files.read_bounded(path, 0, ACCOUNT_FILE_LIMIT).await {
        Ok(AgentReply::Done(data)) => Ok(Some(Some(data))),
        Ok(AgentReply::NotRegular) => Ok(Some(None)),
        Err(err) if err.code == ErrorCode::Enoent => Ok(Some(None)),
        Err(err) if err.code == ErrorCode::Efbig => Err(err),
        Err(_) => Ok(None),
    }
}

/// The account files through the agent alone (the archive endpoints may be unsafe for the
/// container).
struct AgentAccounts<'a> {
    container: &'a str,
    agent: &'a Arc<AgentConnection>,
}

impl AccountReader for AgentAccounts<'_> {
    fn container(&self) -> &str {
        self.container
    }

    async fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
        agent_account_file(self.agent, path)
            .await?
            .ok_or_else(|| not_readable(self.container, path))
    }
}

/// The ids of `spec` (else of the container's configured user) in the connection's
/// container, read through its agent once per connection.
pub async fn connection_user(
    connection: &Arc<AgentConnection>,
    spec: Option<&str>,
) -> Result<UserIds> {
    let key = spec.map(str::to_string);
    let mut users = connection.user_cache().lock().await;
    if let Some(found) = users.get(&key) {
        return Ok(found.clone());
    }
    let container = connection.container.as_str();
    let spec = match spec {
        Some(spec) => spec.to_string(),
        None => connection.configured_user.spec(container).await?,
    };
    let accounts = AgentAccounts {
        container,
        agent: connection,
    };
    let found = resolve_user(&accounts, &spec).await?;
    users.insert(key, found.clone());
    Ok(found)
}
