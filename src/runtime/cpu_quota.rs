//! The CPU quota of the process's cgroup, so that the default number of cores fits it. A pod
//! with `limits.cpu: 1` on a 64-CPU node may run on any of the 64 CPUs (its affinity mask is
//! the node's) but gets one CPU's worth of time per period: 64 pinned executors would each
//! be throttled most of the time, and a throttled core answers nothing until the next
//! period. With the quota, the default is ceil(quota / period) cores.
//!
//! cgroup v2: `cpu.max` ("QUOTA PERIOD" or "max PERIOD") of the process's own cgroup and of
//! each of its parents (the lowest quota binds), read under /sys/fs/cgroup. cgroup v1:
//! `cpu.cfs_quota_us` (-1 for none) and `cpu.cfs_period_us` of the `cpu` controller's
//! mount. Anything unreadable counts as no quota.

use std::path::{Path, PathBuf};

/// Where cgroup v2 is mounted, and v1's `cpu` controller in its two usual spellings.
const V2_ROOT: &str = "/sys/fs/cgroup";
const V1_CPU: [&str; 2] = ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"];

/// At most this many levels are walked up from the process's cgroup.
const MAX_DEPTH: usize = 32;

/// The whole CPUs the quota allows (rounded up, at least 1), or `None` without a quota.
pub fn cpus() -> Option<usize> {
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    v2_cpus(Path::new(V2_ROOT), &own).or_else(|| {
        let path = v1_path(&own).unwrap_or("");
        V1_CPU.iter().find_map(|mount| {
            // The own cgroup under the mount (a host process), else the mount's root (a
            // container, whose mount is its own cgroup).
            [Path::new(mount).join(path), PathBuf::from(mount)]
                .iter()
                .find_map(|dir| {
                    let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
                    v1_cpus(&read("cpu.cfs_quota_us")?, &read("cpu.cfs_period_us")?)
                })
        })
    })
}

/// The path of the v1 `cpu` controller's cgroup in /proc/self/cgroup ("4:cpu,cpuacct:/x"),
/// relative; `None` when absent or outside the namespace.
fn v1_path(proc_self_cgroup: &str) -> Option<&str> {
    proc_self_cgroup.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
        let path = path.trim().trim_start_matches('/');
        (controllers.split(',').any(|c| c == "cpu") && !path.split('/').any(|c| c == ".."))
            .then_some(path)
    })
}

/// The lowest `cpu.max` quota from the process's cgroup (the `0::PATH` line of
/// /proc/self/cgroup) up to `root`, in whole CPUs.
fn v2_cpus(root: &Path, proc_self_cgroup: &str) -> Option<usize> {
    let own = proc_self_cgroup
        .lines()
        .find_map(|l| l.strip_prefix("0::"))?
        .trim()
        .trim_start_matches('/');
    // A path outside the namespace's root ("/../..") is not under the mount: only the root.
    let own = if own.split('/').any(|c| c == "..") {
        ""
    } else {
        own
    };
    let mut dir: PathBuf = root.join(own);
    let mut best: Option<usize> = None;
    for _ in 0..MAX_DEPTH {
        if let Ok(text) = std::fs::read_to_string(dir.join("cpu.max"))
            && let Some(n) = parse_cpu_max(&text)
        {
            best = Some(best.map_or(n, |b| b.min(n)));
        }
        if dir.as_path() == root || !dir.pop() || !dir.starts_with(root) {
            break;
        }
    }
    best
}

/// `cpu.max` of cgroup v2: "QUOTA PERIOD" in µs, or "max PERIOD" for none.
fn parse_cpu_max(text: &str) -> Option<usize> {
    let mut it = text.split_whitespace();
    let quota = it.next()?;
    let period = it.next().unwrap_or("100000");
    if quota == "max" {
        return None;
    }
    whole_cpus(quota.parse().ok()?, period.parse().ok()?)
}

/// cgroup v1's `cpu.cfs_quota_us` (-1 for none) over `cpu.cfs_period_us`.
fn v1_cpus(quota: &str, period: &str) -> Option<usize> {
    let quota: i64 = quota.trim().parse().ok()?;
    let period: u64 = period.trim().parse().ok()?;
    whole_cpus(u64::try_from(quota).ok()?, period)
}

/// ceil(quota / period), at least 1; `None` for a zero period or quota.
fn whole_cpus(quota: u64, period: u64) -> Option<usize> {
    if quota == 0 || period == 0 {
        return None;
    }
    usize::try_from(quota.div_ceil(period))
        .ok()
        .map(|n| n.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_max_is_rounded_up_to_whole_cpus() {
        assert_eq!(parse_cpu_max("100000 100000\n"), Some(1));
        assert_eq!(parse_cpu_max("150000 100000\n"), Some(2));
        assert_eq!(parse_cpu_max("10000 100000\n"), Some(1));
        assert_eq!(parse_cpu_max("400000 100000"), Some(4));
        assert_eq!(parse_cpu_max("50000 25000"), Some(2));
        assert_eq!(parse_cpu_max("max 100000\n"), None);
        assert_eq!(parse_cpu_max(""), None);
        assert_eq!(parse_cpu_max("lots 100000"), None);
        assert_eq!(parse_cpu_max("100000 0"), None);
    }

    #[test]
    fn cfs_quota_of_minus_one_is_no_quota() {
        assert_eq!(v1_cpus("-1\n", "100000\n"), None);
        assert_eq!(v1_cpus("200000\n", "100000\n"), Some(2));
        assert_eq!(v1_cpus("250000", "100000"), Some(3));
        assert_eq!(v1_cpus("x", "100000"), None);
    }

    #[test]
    fn the_v1_cpu_path_is_read_from_proc_self_cgroup() {
        let proc = "5:memory:/m\n4:cpu,cpuacct:/docker/abc\n0::/\n";
        assert_eq!(v1_path(proc), Some("docker/abc"));
        assert_eq!(v1_path("3:cpuacct,cpu:/\n"), Some(""));
        assert_eq!(v1_path("2:cpuset:/x\n"), None);
        assert_eq!(v1_path("2:cpu:/../x\n"), None);
    }

    #[test]
    fn the_lowest_quota_from_the_own_cgroup_up_binds() {
        let root = std::env::temp_dir().join(format!("ringdns-cgroup-{}", std::process::id()));
        let own = root.join("kubepods/pod1/ctr");
        std::fs::create_dir_all(&own).unwrap();
        std::fs::write(root.join("kubepods/cpu.max"), "max 100000\n").unwrap();
        std::fs::write(root.join("kubepods/pod1/cpu.max"), "200000 100000\n").unwrap();
        std::fs::write(own.join("cpu.max"), "300000 100000\n").unwrap();
        let proc = "0::/kubepods/pod1/ctr\n";
        assert_eq!(v2_cpus(&root, proc), Some(2));
        std::fs::write(own.join("cpu.max"), "50000 100000\n").unwrap();
        assert_eq!(v2_cpus(&root, proc), Some(1));
        // A container with its own cgroup namespace sees itself as "/".
        std::fs::write(root.join("cpu.max"), "700000 100000\n").unwrap();
        assert_eq!(v2_cpus(&root, "0::/\n"), Some(7));
        assert_eq!(v2_cpus(&root, "0::/../../elsewhere\n"), Some(7));
        // v1 lines only, or no cpu.max anywhere: no quota.
        assert_eq!(v2_cpus(&root, "4:cpu,cpuacct:/x\n"), None);
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(v2_cpus(&root, proc), None);
    }
}
