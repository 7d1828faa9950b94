//! Whether a container's bind mounts let it redirect the engine's archive endpoints on the
//! host: a source inside another mount the container may write.

use std::path::Path;

use super::container_mount::ContainerMount;

/// A bind mount whose host source lies inside another bind mount the container may write:
/// the container can replace that source with a symlink. The engine's archive endpoints
/// (Docker's `docker cp` path) bind the sources again, by path, at every call, and so follow
/// such a symlink on the host; any archive call can be led there through a symlink the
/// container plants elsewhere. Such a container is answered only from its own root.
pub fn swappable_mount(mounts: &[ContainerMount]) -> Option<String> {
    let under = |inner: &str, outer: &str| {
        Path::new(inner) != Path::new(outer) && Path::new(inner).starts_with(outer)
    };
    mounts.iter().find_map(|inner| {
        let outer = mounts
            .iter()
            .find(|outer| !outer.readonly && under(&inner.source, &outer.source))?;
        Some(format!(
            "the bind mount {} has its host source {} inside the container-writable mount {} ({}), so the engine would follow whatever the container put there; it is answered only from the container's running root, not through the engine",
            inner.target, inner.source, outer.target, outer.source
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_inside_a_writable_mount_is_swappable() {
        let bind = |s: &str, t: &str, ro| ContainerMount::bind(s, t, ro);
        assert!(swappable_mount(&[
            bind("/w", "/workspace", false),
            bind("/w/inner", "/inner", false)
        ])
        .is_some_and(|why| why.contains("/inner") && why.contains("/workspace")));
        assert!(swappable_mount(&[
            bind("/w", "/workspace", true),
            bind("/w/inner", "/inner", false)
        ])
        .is_none());
        assert!(swappable_mount(&[bind("/w", "/a", false), bind("/w", "/b", false)]).is_none());
        assert!(swappable_mount(&[bind("/w", "/a", false), bind("/wx/y", "/b", false)]).is_none());
    }
}
