//! Where `DockerFileIO` and the session's setup read a container's /etc/passwd and
//! /etc/group from: the container's root on the host where that is reachable, else its
//! agent, else the archive endpoint (images without a shell work too) unless that is
//! unsafe for the container.

use std::sync::Arc;

use super::host_files::{Host, HostFiles};
use crate::agent::{
    agent_account_file, not_readable, AccountReader, AgentConnection, ACCOUNT_FILE_LIMIT,
};
use crate::container_archive::EngineFiles;
use crate::error::{Error, ErrorCode, Result};

/// Where the account files are read from: the container's root on the host, else the
/// engine unless that is unsafe for the container (`None`).
pub struct AccountFiles<'a> {
    pub container: &'a str,
    pub host: Option<&'a HostFiles>,
    /// The container's agent, reading as root inside the container.
    pub agent: Option<&'a Arc<AgentConnection>>,
    pub engine: Option<EngineFiles<'a>>,
}

impl AccountReader for AccountFiles<'_> {
    fn container(&self) -> &str {
        self.container
    }

    async fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
        if let Some(host) = self.host {
            let (host, at) = (host.clone(), path.to_string());
            let read =
                tokio::task::spawn_blocking(move || host.read_bounded(&at, ACCOUNT_FILE_LIMIT))
                    .await
                    .map_err(|e| {
                        Error::new(ErrorCode::EngineError, format!("reading {path}: {e}"))
                    })??;
            if let Host::Done(found) = read {
                return Ok(found);
            }
        }
        if let Some(connection) = self.agent {
            if let Some(found) = agent_account_file(connection, path).await? {
                return Ok(found);
            }
        }
        match &self.engine {
            Some(engine) => engine.read_small(path, ACCOUNT_FILE_LIMIT).await,
            None => Err(not_readable(self.container, path)),
        }
    }
}
