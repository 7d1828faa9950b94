//! Acting as the caller's user for file operations: the calling thread's file-system ids
//! and groups are set with raw system calls (glibc's wrappers would change every thread).
//! Each file operation runs on a thread of its own, so nothing needs restoring; permission
//! checks are then the kernel's, and new files belong to that user.

use container_isolation_agent::protocol::Creds;

/// Takes `creds` for this thread's file-system access.
pub fn act_as(creds: &Creds) -> std::io::Result<()> {
    if creds.uid == 0 && creds.gid == 0 && creds.groups.is_empty() {
        return Ok(());
    }
    let groups: Vec<libc::gid_t> = creds.groups.clone();
    // SAFETY: raw system calls on this thread's credentials, with a valid group list.
    unsafe {
        if libc::syscall(libc::SYS_setgroups, groups.len(), groups.as_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        libc::syscall(libc::SYS_setfsgid, creds.gid);
        libc::syscall(libc::SYS_setfsuid, creds.uid);
        // Both calls return the previous id; asking again tells whether they took.
        let fsuid = libc::syscall(libc::SYS_setfsuid, u32::MAX) as u32;
        let fsgid = libc::syscall(libc::SYS_setfsgid, u32::MAX) as u32;
        if fsuid != creds.uid || fsgid != creds.gid {
            return Err(std::io::Error::from_raw_os_error(libc::EPERM));
        }
    }
    Ok(())
}
