//! A session's container stopped (by the host or for idleness), started again, and the
//! session destroyed: its container (and a `volume` session's volume, read back first, and
//! a compose session's services) removed, its clone moved to trash.

use super::idle_tracker::{IdleOwner, SessionCall};
use super::service_teardown::{remove_services, stop_services};
use super::session_volume::session_volume;
use super::workspace_record as record;
use super::workspaces::{blocking_error, Workspaces};
use crate::container_runtime::ContainerRuntime;
use crate::error::{ErrorCode, Result};
use crate::workspace_volume::remove_volume;

impl Workspaces {
    /// Stops the container; the clone and the workspace stay.
    pub async fn stop(&self, session_id: &str) -> Result<()> {
        let record = self.required(session_id)?;
        self.close_forwards(session_id);
        match self.runtime.stop(&record.container_id, None).await {
            Err(err) if err.code == ErrorCode::ContainerNotFound => {}
            other => other?,
        }
        stop_services(&self.runtime, &record).await
    }

    /// Stops an idle session's container, under the session's lock so that a start for a
    /// use waits for it.
    /// A session whose `shutdownAction` is `none` keeps running.
    pub async fn idle_stop(&self, session_id: &str) -> Result<()> {
        let lock = self.lock_for(session_id);
        let _guard = lock.lock().await;
        let record = self.required(session_id)?;
        if let Some(settings) = &record.settings {
            if !settings.behaviour.stops_when_idle() {
                return Ok(());
            }
        }
        self.stop(session_id).await
    }

    /// Starts a session's container again (after an idle stop), with `postStartCommand`.
    pub async fn start_session(&self, session_id: &str) -> Result<()> {
        let record = self.required(session_id)?;
        let lock = self.lock_for(session_id);
        let _guard = lock.lock().await;
        self.ensure_started(&record).await
    }

    /// Removes the container (and a `volume` session's volume, its repository read back into
    /// the clone first where it can be) and moves the clone (with its branch and commits) to
    /// trash, with the session's own project if it has one.
    pub async fn destroy(&self, session_id: &str) -> Result<()> {
        let record = self.required(session_id)?;
        if let Some(idle) = &self.idle {
            idle.forget(session_id);
        }
        let lock = self.lock_for(session_id);
        let _guard = lock.lock().await;
        self.probes.forget(&record.container_id);
        self.egress.forget(session_id);
        self.close_forwards(session_id);
        let reading = self.read_lock(session_id);
        let _reading = reading.lock().await;
        let read_back = self.read_back(&record).await;
        match self.runtime.remove(&record.container_id).await {
            Err(err) if err.code != ErrorCode::ContainerNotFound => return Err(err),
            _ => {}
        }
        remove_services(&self.runtime.engine().await?, &record).await?;
        if let Some(volume) = session_volume(&record)? {
            match read_back {
                Ok(()) => remove_volume(&self.runtime.engine().await?, volume).await?,
                // The work it holds is not in the clone: the volume stays on the engine until
                // `reapOrphans` finds its owner gone, as a bind session's clone stays in trash.
                Err(err) => tracing::warn!(
                    "session '{session_id}': volume '{volume}' kept, its work could not be read back: {err}"
                ),
            }
        }
        let clones = self.clones.clone();
        let id = session_id.to_string();
        tokio::task::spawn_blocking(move || clones.remove_session_clone(&id))
            .await
            .map_err(blocking_error)??;
        self.trash_remote_project(session_id).await?;
        self.trash_checkpoints(session_id).await?;
        record::remove(&self.options.base_dir, session_id)
    }
}

impl IdleOwner for Workspaces {
    fn stop_idle<'a>(&'a self, session: &'a str) -> SessionCall<'a> {
        Box::pin(self.idle_stop(session))
    }

    fn start_again<'a>(&'a self, session: &'a str) -> SessionCall<'a> {
        Box::pin(self.start_session(session))
    }
}
