//! A container a `ContainerRuntime` names, as a place buffered commands run (lifecycle
//! commands and the environment probe on a session Pod).

use std::future::Future;

use super::runtime_trait::ContainerRuntime;
use crate::error::Result;
use crate::runtime::{ExecOutcome, ExecRequest, ExecTarget};

pub struct RuntimeContainer<'a, R> {
    pub runtime: &'a R,
    pub id: &'a str,
}

impl<R: ContainerRuntime> ExecTarget for RuntimeContainer<'_, R> {
    fn name(&self) -> &str {
        self.id
    }

    fn run(&self, request: ExecRequest) -> impl Future<Output = Result<ExecOutcome>> + Send {
        self.runtime.exec(self.id, request)
    }
}
