//! Where a buffered command runs: a container on an engine, or one a `ContainerRuntime`
//! names (a session Pod). Lifecycle commands and the user environment probe are written
//! once over it.

use std::future::Future;

use super::exec::{ExecOutcome, ExecRequest};
use super::exec_buffered::run_buffered;
use crate::engine::Engine;
use crate::error::Result;

pub trait ExecTarget: Sync {
    /// The container, as messages name it.
    fn name(&self) -> &str;

    /// Runs a command to completion; a non-zero exit is a result, not an error.
    fn run(&self, request: ExecRequest) -> impl Future<Output = Result<ExecOutcome>> + Send;
}

/// A container on an engine, reached through the Engine API's exec.
pub struct EngineContainer<'a> {
    pub engine: &'a Engine,
    pub id: &'a str,
}

impl ExecTarget for EngineContainer<'_> {
    fn name(&self) -> &str {
        self.id
    }

    fn run(&self, request: ExecRequest) -> impl Future<Output = Result<ExecOutcome>> + Send {
        run_buffered(self.engine, self.id, request)
    }
}
