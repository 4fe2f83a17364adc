//! The memory this machine lets a run hold, the default of the cost gate's memory limit: its
//! physical memory, or its control group's limit where that is lower (a container's, or a
//! Slurm job's `--mem` under `task/cgroup`), so a run the system would kill is refused first.

use std::path::Path;

/// The memory a run may hold here, in bytes; None where the system does not say (no
/// `/proc`): no limit then.
pub fn memory() -> Option<u64> {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| mem_total(&t));
    let group = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|t| cgroup_limit(&t, Path::new("/sys/fs/cgroup")));
    match (total, group) {
        (Some(t), Some(g)) => Some(t.min(g)),
        (t, g) => t.or(g),
    }
}

/// `MemTotal` of /proc/meminfo, in bytes.
fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The memory limit of this process's control group (`/proc/self/cgroup` as `cgroup`, the
/// hierarchy mounted at `root`): cgroup v2's `memory.max`, or v1's `memory.limit_in_bytes`;
/// None where it is unlimited ("max", or v1's page-rounded 2^63) or cannot be read.
fn cgroup_limit(cgroup: &str, root: &Path) -> Option<u64> {
    let read = |p: &Path| std::fs::read_to_string(p).ok();
    let limits = cgroup.lines().filter_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let path = path.trim_start_matches('/');
        let text = if id == "0" && controllers.is_empty() {
            read(&root.join(path).join("memory.max"))?
        } else if controllers.split(',').any(|c| c == "memory") {
            read(&root.join("memory").join(path).join("memory.limit_in_bytes"))?
        } else {
            return None;
        };
        text.trim().parse::<u64>().ok().filter(|&b| b < 1 << 62)
    });
    limits.min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_total_and_the_groups_limit() {
        let info = "MemTotal:       24683664 kB\nMemFree:        1000 kB\n";
        assert_eq!(mem_total(info), Some(24683664 * 1024));
        assert_eq!(mem_total("MemFree: 1 kB\n"), None);
        let root = std::env::temp_dir().join(format!("gdrsim-cgroup-{}", std::process::id()));
        let v2 = root.join("job/step");
        let v1 = root.join("memory/slurm/job");
        std::fs::create_dir_all(&v2).unwrap();
        std::fs::create_dir_all(&v1).unwrap();
        std::fs::write(v2.join("memory.max"), "8589934592\n").unwrap();
        assert_eq!(cgroup_limit("0::/job/step\n", &root), Some(8 << 30));
        std::fs::write(v2.join("memory.max"), "max\n").unwrap();
        assert_eq!(cgroup_limit("0::/job/step\n", &root), None);
        std::fs::write(v1.join("memory.limit_in_bytes"), "4294967296\n").unwrap();
        let hybrid = "4:memory:/slurm/job\n1:cpu,cpuacct:/\n0::/job/step\n";
        assert_eq!(cgroup_limit(hybrid, &root), Some(4 << 30));
        std::fs::write(v1.join("memory.limit_in_bytes"), "9223372036854771712\n").unwrap();
        assert_eq!(cgroup_limit(hybrid, &root), None, "v1's unlimited");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
