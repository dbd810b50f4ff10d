//! The standard `process_*` families of Prometheus's client libraries (CPU seconds, memory,
//! file descriptors, start time), read from `/proc/self` at scrape time, so that the CPU
//! and memory panels of CoreDNS's dashboards, which query these names, show ringdns. The
//! query path pays nothing for them.

use super::family::{Desc, Kind, Sample, Sink};

/// Linux reports `/proc` times in USER_HZ, which is 100 on every architecture's user ABI
/// (Prometheus's procfs assumes the same).
const USER_HZ: f64 = 100.0;

static CPU: Desc = Desc {
    name: "process_cpu_seconds_total",
    help: "Total user and system CPU time spent in seconds.",
    kind: Kind::Counter,
    labels: &[],
};

static RESIDENT: Desc = Desc {
    name: "process_resident_memory_bytes",
    help: "Resident memory size in bytes.",
    kind: Kind::Gauge,
    labels: &[],
};

static VIRTUAL: Desc = Desc {
    name: "process_virtual_memory_bytes",
    help: "Virtual memory size in bytes.",
    kind: Kind::Gauge,
    labels: &[],
};

static OPEN_FDS: Desc = Desc {
    name: "process_open_fds",
    help: "Number of open file descriptors.",
    kind: Kind::Gauge,
    labels: &[],
};

static MAX_FDS: Desc = Desc {
    name: "process_max_fds",
    help: "Maximum number of open file descriptors.",
    kind: Kind::Gauge,
    labels: &[],
};

static START: Desc = Desc {
    name: "process_start_time_seconds",
    help: "Start time of the process since unix epoch in seconds.",
    kind: Kind::Gauge,
    labels: &[],
};

/// What `/proc/self/stat` says of the process.
#[derive(Debug, PartialEq)]
struct Stat {
    /// User plus system time, in USER_HZ ticks.
    cpu_ticks: u64,
    /// Start, in ticks after boot.
    start_ticks: u64,
    /// Virtual memory, bytes.
    vsize: u64,
}

/// Parses `/proc/PID/stat`: fields after the command (which may hold spaces and
/// parentheses, so the last `)` ends it); utime and stime are fields 14 and 15, starttime
/// 22 and vsize 23 (proc(5)).
fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    // `rest` starts at field 3 (state).
    let f: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| -> Option<u64> { f.get(n - 3)?.parse().ok() };
    Some(Stat {
        cpu_ticks: field(14)? + field(15)?,
        start_ticks: field(22)?,
        vsize: field(23)?,
    })
}

/// `VmRSS` of `/proc/PID/status`, in bytes.
fn parse_rss(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The soft limit of "Max open files" in `/proc/PID/limits`.
fn parse_max_fds(limits: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// `btime` of `/proc/stat`: when the machine booted, in seconds since the epoch.
fn parse_boot_time(stat: &str) -> Option<u64> {
    stat.lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()
}

/// Adds the families to a scrape; a file that cannot be read leaves its families out.
pub fn collect(out: &mut Sink) {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    if let Some(stat) = read("/proc/self/stat").as_deref().and_then(parse_stat) {
        out.add(&CPU, &[], Sample::Float(stat.cpu_ticks as f64 / USER_HZ));
        out.gauge(&VIRTUAL, &[], stat.vsize as f64);
        if let Some(boot) = read("/proc/stat").as_deref().and_then(parse_boot_time) {
            let start = boot as f64 + stat.start_ticks as f64 / USER_HZ;
            out.gauge(&START, &[], start);
        }
    }
    if let Some(rss) = read("/proc/self/status").as_deref().and_then(parse_rss) {
        out.gauge(&RESIDENT, &[], rss as f64);
    }
    if let Ok(dir) = std::fs::read_dir("/proc/self/fd") {
        // The directory's own descriptor, open while it is read, is not counted.
        out.gauge(&OPEN_FDS, &[], dir.count().saturating_sub(1) as f64);
    }
    if let Some(max) = read("/proc/self/limits").as_deref().and_then(parse_max_fds) {
        out.gauge(&MAX_FDS, &[], max as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_read_after_a_command_with_spaces_and_parentheses() {
        let stat = "4242 (ring (dns) x) S 1 4242 4242 0 -1 4194560 1 0 0 0 250 75 0 0 20 0 \
                    3 0 123456 987654321 2048 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 \
                    17 1 0 0 0 0 0";
        assert_eq!(
            parse_stat(stat),
            Some(Stat {
                cpu_ticks: 325,
                start_ticks: 123456,
                vsize: 987654321,
            })
        );
        assert_eq!(parse_stat("4242 (short) S 1"), None);
    }

    #[test]
    fn rss_limits_and_boot_time_are_read() {
        assert_eq!(
            parse_rss("Name:\tringdns\nVmRSS:\t   30720 kB\nVmData: 1 kB\n"),
            Some(30720 * 1024)
        );
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max cpu time              unlimited            unlimited            seconds   \n\
                      Max open files            20000                524288               files     \n";
        assert_eq!(parse_max_fds(limits), Some(20000));
        assert_eq!(
            parse_boot_time("cpu  1 2 3\nbtime 1764626880\nprocesses 9\n"),
            Some(1764626880)
        );
    }

    #[test]
    fn this_process_is_described() {
        let mut sink = Sink::default();
        collect(&mut sink);
        let value = |name| match sink.get(name, &[]) {
            Some(Sample::Float(v)) => *v,
            other => panic!("{name}: {other:?}"),
        };
        assert!(value("process_resident_memory_bytes") > 1e6);
        assert!(value("process_open_fds") >= 3.0);
        assert!(value("process_max_fds") >= value("process_open_fds"));
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        let start = value("process_start_time_seconds");
        assert!(start <= now + 1.0 && start > now - 24.0 * 3600.0, "{start}");
        assert!(value("process_cpu_seconds_total") >= 0.0);
    }
}
