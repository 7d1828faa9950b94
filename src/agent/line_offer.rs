//! What one start of a container's agent is offered: the direct line, through this
//! process's socket in the container's line folder, or why there is none — off Linux, a
//! remote engine, a container without the folder (made before the line, or not by this
//! library on this machine), a folder the container could swap through a writable mount,
//! or `CONTAINER_ISOLATION_LINE=off`.

use std::sync::Arc;

use bollard::models::ContainerInspectResponse;

use super::agent_line::LineOffer;
use super::line_listener::LineListener;
use crate::engine::Engine;
use crate::runtime::{line_mount, ContainerMount};

/// `off` keeps every agent on its exec stream.
pub const LINE_SWITCH: &str = "CONTAINER_ISOLATION_LINE";

/// What this start of `container`'s agent is offered: the line, through this process's
/// socket in its line folder (made now if need be), or why there is none.
pub fn line_offer<'a>(
    engine: &Engine,
    inspected: &ContainerInspectResponse,
    engine_id: &str,
    mounts: &[ContainerMount],
    listener: &'a mut Option<Arc<LineListener>>,
) -> std::result::Result<LineOffer<'a>, String> {
    if !cfg!(target_os = "linux") {
        return Err("there is no direct line off Linux".into());
    }
    if std::env::var(LINE_SWITCH).is_ok_and(|v| v == "off") {
        return Err(format!("{LINE_SWITCH}=off"));
    }
    if !engine.is_local() {
        return Err("the engine is not on this machine".into());
    }
    let Some(folder) = line_mount(inspected.mounts.clone()) else {
        return Err("the container has no line folder (it was made before the direct line, or not by this library on this machine)".into());
    };
    if let Some(outer) = mounts.iter().find(|outer| {
        !outer.readonly && std::path::Path::new(&folder.source).starts_with(&outer.source)
    }) {
        return Err(format!(
            "the line's folder {} lies inside the container-writable mount {}",
            folder.source, outer.target
        ));
    }
    let init_pid = inspected
        .state
        .as_ref()
        .and_then(|s| s.pid)
        .and_then(|p| u32::try_from(p).ok())
        .filter(|p| *p > 0)
        .ok_or("the engine gave no pid for the container's main process")?;
    if listener
        .as_ref()
        .is_none_or(|l| l.source != folder.source || !l.in_place())
    {
        *listener = None;
        *listener = Some(Arc::new(LineListener::open(&folder.source)?));
    }
    Ok(LineOffer {
        listener: listener.as_deref().expect("just made"),
        init_pid,
        engine_id: engine_id.to_string(),
    })
}
