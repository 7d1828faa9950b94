//! Each session's egress as this process last set it (with the host's callbacks), and a
//! stored session's where this process set none: its spec with the constructor's callbacks
//! (the ones its creator gave are gone with that process).

use std::collections::HashMap;
use std::sync::Mutex;

use super::egress_settings::{Egress, EgressSpec};

#[derive(Default)]
pub struct SessionEgress(Mutex<HashMap<String, Egress>>);

impl SessionEgress {
    fn with<T>(&self, f: impl FnOnce(&mut HashMap<String, Egress>) -> T) -> T {
        f(&mut self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }

    pub fn remember(&self, session_id: &str, egress: Egress) {
        self.with(|all| all.insert(session_id.to_string(), egress));
    }

    pub fn forget(&self, session_id: &str) {
        self.with(|all| all.remove(session_id));
    }

    /// The session's egress: as set here, else `stored` with `constructor`'s callbacks;
    /// `None` when nothing is stored.
    pub fn of(
        &self,
        session_id: &str,
        stored: Option<EgressSpec>,
        constructor: &Egress,
    ) -> Option<Egress> {
        let spec = stored?;
        let set_here = self.with(|all| all.get(session_id).cloned());
        Some(set_here.unwrap_or_else(|| Egress::restored(spec, constructor)))
    }
}
