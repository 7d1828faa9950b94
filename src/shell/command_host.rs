//! Where a shell's commands run: a container of an engine (through its session agent where
//! one runs, else engine execs), or a session reached only through its agent (a Kubernetes
//! Pod, which has no engine on this machine).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::agent::{agent_if, AgentConnection};
use crate::engine::{Engine, EngineOptions};
use crate::error::Result;

/// The session agent of a container reached without an engine, or why it cannot serve.
pub type AgentFuture<'a> = Pin<Box<dyn Future<Output = Result<Arc<AgentConnection>>> + Send + 'a>>;

/// Gives the agent a session's commands go through (started where it is not yet).
pub trait AgentSource: Send + Sync + std::fmt::Debug {
    /// The agent's connection; `UNSUPPORTED`, with the reason, where none can serve.
    fn connection(&self) -> AgentFuture<'_>;
}

#[derive(Debug, Clone)]
pub enum CommandHost {
    /// A container of this engine; through its agent where `agent` and one runs.
    Engine {
        engine: Box<EngineOptions>,
        agent: bool,
    },
    /// A session whose commands only its agent runs.
    Agent(Arc<dyn AgentSource>),
}

/// What a command is started through: the agent where it serves, and the engine where
/// there is one (the fallback for what the agent cannot do).
pub struct Reached {
    pub engine: Option<Engine>,
    pub agent: Option<Arc<AgentConnection>>,
}

impl CommandHost {
    pub async fn reach(&self, container: &str) -> Result<Reached> {
        match self {
            CommandHost::Engine { engine, agent } => {
                let engine = Engine::connect(engine).await?;
                let agent = agent_if(*agent, &engine, container).await?;
                Ok(Reached {
                    engine: Some(engine),
                    agent,
                })
            }
            CommandHost::Agent(source) => Ok(Reached {
                engine: None,
                agent: Some(source.connection().await?),
            }),
        }
    }
}
