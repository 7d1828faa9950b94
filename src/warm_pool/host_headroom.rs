//! Whether the host can spare a new pool member now: its 1-minute load average per CPU and
//! the memory it has available (Linux `/proc/meminfo`'s `MemAvailable`; where that cannot
//! be read, memory is not what holds a member back).

use super::pool_options::PoolOptions;

/// `None` when a member may be made now, else why not.
pub fn lacking(options: &PoolOptions, member_memory: Option<u64>) -> Option<String> {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1) as f64;
    if let Some(load) = load_average() {
        if load / cpus > options.max_load_per_cpu {
            return Some(format!(
                "the host's load average {load:.2} is over {:.2} per CPU ({cpus} CPUs)",
                options.max_load_per_cpu
            ));
        }
    }
    let wanted = options
        .min_available_memory
        .saturating_add(member_memory.unwrap_or(0));
    match available_memory() {
        Some(free) if free < wanted => Some(format!(
            "the host has {} MiB of memory available, under the {} MiB a member waits for",
            free >> 20,
            wanted >> 20
        )),
        _ => None,
    }
}

/// The 1-minute load average.
fn load_average() -> Option<f64> {
    let mut loads = [0f64; 3];
    // SAFETY: `loads` has room for the 3 samples asked for.
    let got = unsafe { libc::getloadavg(loads.as_mut_ptr(), 3) };
    (got >= 1).then_some(loads[0])
}

fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    mem_available(&text)
}

/// `MemAvailable` of a `/proc/meminfo` text, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let mut fields = line.split_whitespace().skip(1);
    let kib: u64 = fields.next()?.parse().ok()?;
    (fields.next() == Some("kB")).then_some(kib.checked_mul(1024)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn available_memory_is_read_from_meminfo() {
        let text = "MemTotal:  2000 kB\nMemFree:  10 kB\nMemAvailable:    1024 kB\n";
        assert_eq!(mem_available(text), Some(1 << 20));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
        assert_eq!(mem_available("MemAvailable: x kB\n"), None);
    }

    #[test]
    fn a_host_short_of_memory_is_told() {
        let options = PoolOptions {
            min_available_memory: u64::MAX / 2,
            max_load_per_cpu: 1e9,
            ..Default::default()
        };
        if available_memory().is_some() {
            let why = lacking(&options, None).unwrap();
            assert!(why.contains("memory available"), "{why}");
        }
        let easy = PoolOptions {
            min_available_memory: 0,
            max_load_per_cpu: 1e9,
            ..Default::default()
        };
        assert_eq!(lacking(&easy, None), None);
    }
}
