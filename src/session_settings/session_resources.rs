//! A session's resource limits, fixed when it is created: its own `resources` over the
//! `Workspaces` default, field by field, with a default pids limit (`min(4096, pid_max /
//! 8)`) so that one session's fork bomb cannot take the host's process table; then
//! devcontainer.json's `hostRequirements` compared with them (or with the engine's
//! capacity where no limit is set), each misfit a warning.

use super::stored_settings::SessionSettings;
use crate::devcontainer::Available;
use crate::engine::Engine;
use crate::runtime::resource_limits::{default_pids_limit, host_pid_max};
use crate::runtime::ResourceLimits;

/// The limits a new session's containers get.
pub fn session_limits(
    session: ResourceLimits,
    default: ResourceLimits,
    pid_max: Option<i64>,
) -> ResourceLimits {
    let mut limits = session.over(default);
    limits
        .pids
        .get_or_insert_with(|| default_pids_limit(pid_max));
    limits
}

/// What the session has: its limits, else the engine's CPU count and total memory.
pub fn available(settings: &SessionSettings, engine: (Option<i64>, Option<i64>)) -> Available {
    let (ncpu, mem_total) = engine;
    let cpus = settings.resources.cpus();
    let memory = settings.effective_memory();
    Available {
        cpus: cpus.or(ncpu.filter(|n| *n > 0).map(|n| n as f64)),
        cpus_limited: cpus.is_some(),
        memory: memory.or(mem_total.filter(|n| *n > 0)),
        memory_limited: memory.is_some(),
    }
}

/// Sets the session's limits and adds a warning for each `hostRequirements` they (or the
/// engine) do not meet.
pub async fn settle_resources(
    engine: &Engine,
    settings: &mut SessionSettings,
    session: ResourceLimits,
    default: ResourceLimits,
) {
    settings.resources = session_limits(session, default, host_pid_max());
    let Some(requirements) = settings.host_requirements.clone() else {
        return;
    };
    // The engine's capacity only matters where the session sets no limit; unknown when it
    // does not say.
    let capacity = match engine.docker().info().await {
        Ok(info) => (info.ncpu, info.mem_total),
        Err(_) => (None, None),
    };
    let unmet = requirements.unmet(&available(settings, capacity));
    settings.warnings.extend(unmet);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::devcontainer::HostRequirements;
    use std::path::Path;

    #[test]
    fn a_session_gets_the_default_pids_limit_unless_the_host_gives_one() {
        let none = ResourceLimits::default();
        assert_eq!(session_limits(none, none, Some(32768)).pids, Some(4096));
        assert_eq!(session_limits(none, none, Some(8192)).pids, Some(1024));
        let host = ResourceLimits {
            pids: Some(200),
            memory: Some(1 << 30),
            ..none
        };
        let own = ResourceLimits {
            memory: Some(1 << 29),
            ..none
        };
        let limits = session_limits(own, host, Some(32768));
        assert_eq!((limits.pids, limits.memory), (Some(200), Some(1 << 29)));
        assert_eq!((limits.nano_cpus, limits.nofile), (None, None));
    }

    #[test]
    fn requirements_meet_the_limits_else_the_engine() {
        let mut settings = SessionSettings::plain(Path::new("/c"), "img".into(), "/workspace");
        settings.host_requirements = Some(HostRequirements {
            cpus: Some(2),
            memory: Some(1 << 30),
            ..Default::default()
        });
        let engine = (Some(4), Some(8 << 30));
        let req = settings.host_requirements.clone().unwrap();
        assert!(req.unmet(&available(&settings, engine)).is_empty());
        settings.resources.nano_cpus = Some(1_000_000_000);
        settings.memory = Some(256 << 20);
        let unmet = req.unmet(&available(&settings, engine));
        assert_eq!(unmet.len(), 2, "{unmet:?}");
        assert!(unmet[0].contains("the session is limited to 1 CPUs"));
        settings.resources = ResourceLimits::default();
        settings.memory = None;
        assert_eq!(req.unmet(&available(&settings, (Some(1), None))).len(), 1);
    }
}
