//! What a container is given beyond the engine's defaults: privileged mode, capabilities,
//! security options, host devices, namespace modes. Whoever builds a container config
//! decides what goes here (a workspace's trust check does, for devcontainer.json).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerPrivileges {
    pub privileged: bool,
    pub cap_add: Vec<String>,
    pub cap_drop: Vec<String>,
    pub security_opt: Vec<String>,
    /// `HOST[:CONTAINER[:PERMISSIONS]]`.
    pub devices: Vec<String>,
    /// `pid`, `ipc`, `uts`, `userns`, `cgroupns` → the namespace's mode.
    pub namespaces: BTreeMap<String, String>,
}

impl ContainerPrivileges {
    /// These and `other`'s together (`other`'s namespace modes win).
    pub fn merged(mut self, other: ContainerPrivileges) -> ContainerPrivileges {
        self.privileged |= other.privileged;
        self.cap_add.extend(other.cap_add);
        self.cap_drop.extend(other.cap_drop);
        self.security_opt.extend(other.security_opt);
        self.devices.extend(other.devices);
        self.namespaces.extend(other.namespaces);
        self
    }
}
