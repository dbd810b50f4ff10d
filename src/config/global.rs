//! The global block `{ … }` before the first server block: process-wide tuning that has no
//! place in CoreDNS's per-block directives (cores, batches, socket buffers, backends).

use crate::corefile::{Directive, Dispenser, Error, Token};

/// How UDP datagrams are read and written on each core (see runtime/, "The io layer").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UdpBackend {
    /// recvmmsg/sendmmsg batches; parks on the executor only when the socket is empty.
    Mmsg,
    /// glommio's UdpSocket, one syscall per datagram: the baseline to measure against.
    Glommio,
}

/// Process-wide tuning; every field has the default an operator gets without a global block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tuning {
    /// How many cores serve (one pinned executor each); `None` = every CPU we may run on.
    pub workers: Option<usize>,
    /// Which CPUs the executors are pinned to; `None` = the process affinity mask.
    pub cpus: Option<Vec<usize>>,
    /// Datagrams per recvmmsg/sendmmsg call.
    pub udp_batch: usize,
    /// SO_RCVBUF of each UDP socket, bytes (0 = kernel default).
    pub udp_rcvbuf: usize,
    /// SO_SNDBUF of each UDP socket, bytes (0 = kernel default).
    pub udp_sndbuf: usize,
    /// SO_RCVBUF of the TCP listeners, inherited by accepted connections (0 = default).
    pub tcp_rcvbuf: usize,
    /// SO_SNDBUF of the TCP listeners, inherited by accepted connections (0 = default).
    pub tcp_sndbuf: usize,
    /// Open TCP connections allowed per core and listener; more are closed at accept.
    pub tcp_max_conns: usize,
    /// Open TCP connections allowed per client address (IPv6: per /64), per core and
    /// listener; 0 = no cap.
    pub tcp_max_conns_per_ip: usize,
    /// The UDP datagram backend.
    pub udp_backend: UdpBackend,
    /// glommio's registered io_memory per executor, bytes; small, since networking gains
    /// nothing from registered buffers and it counts against RLIMIT_MEMLOCK.
    pub io_memory: usize,
    /// How long an idle executor polls before it sleeps in the kernel (0 = sleep at once):
    /// trades idle CPU for fewer wake-ups under steady load.
    pub spin_before_park: std::time::Duration,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            workers: None,
            cpus: None,
            udp_batch: 32,
            udp_rcvbuf: 4 << 20,
            udp_sndbuf: 4 << 20,
            tcp_rcvbuf: 0,
            tcp_sndbuf: 0,
            tcp_max_conns: 1024,
            tcp_max_conns_per_ip: 64,
            udp_backend: UdpBackend::Mmsg,
            io_memory: 256 << 10,
            spin_before_park: std::time::Duration::ZERO,
        }
    }
}

/// Parses the global block's directives; unknown options are errors.
pub fn parse(directives: &[Directive]) -> Result<Tuning, Error> {
    let mut t = Tuning::default();
    for dir in directives {
        let mut d = Dispenser::new(&dir.tokens);
        while d.next() {
            let name = d.val().to_string();
            let args = d.remaining_args();
            let one = |d: &Dispenser<'_>| -> Result<String, Error> {
                match args.as_slice() {
                    [a] => Ok(a.clone()),
                    _ => Err(d.arg_err()),
                }
            };
            match name.as_str() {
                "workers" => t.workers = Some(number(&d, &one(&d)?, 1, 4096)?),
                "cpus" => t.cpus = Some(cpu_list(&d, &one(&d)?)?),
                "udp_batch" => t.udp_batch = number(&d, &one(&d)?, 1, 1024)?,
                "udp_rcvbuf" => t.udp_rcvbuf = size(&d, &one(&d)?)?,
                "udp_sndbuf" => t.udp_sndbuf = size(&d, &one(&d)?)?,
                "tcp_rcvbuf" => t.tcp_rcvbuf = size(&d, &one(&d)?)?,
                "tcp_sndbuf" => t.tcp_sndbuf = size(&d, &one(&d)?)?,
                "tcp_max_conns" => t.tcp_max_conns = number(&d, &one(&d)?, 1, 1_000_000)?,
                "tcp_max_conns_per_ip" => {
                    t.tcp_max_conns_per_ip = number(&d, &one(&d)?, 0, 1_000_000)?
                }
                "io_memory" => {
                    t.io_memory = size(&d, &one(&d)?)?;
                    if t.io_memory < 64 << 10 {
                        return Err(d.err("io_memory must be at least 64K"));
                    }
                }
                "spin_before_park" => {
                    let v = one(&d)?;
                    t.spin_before_park =
                        crate::plugin::duration::parse(&v).map_err(|e| d.err(&e))?;
                    if t.spin_before_park > std::time::Duration::from_millis(100) {
                        return Err(d.err("spin_before_park must be at most 100ms"));
                    }
                }
                "udp_backend" => {
                    t.udp_backend = match one(&d)?.as_str() {
                        "mmsg" => UdpBackend::Mmsg,
                        "glommio" => UdpBackend::Glommio,
                        other => {
                            return Err(d.err(&format!(
                                "unknown udp_backend '{other}' (expected mmsg or glommio)"
                            )));
                        }
                    }
                }
                other => return Err(d.err(&format!("unknown global option '{other}'"))),
            }
        }
    }
    if let (Some(w), Some(c)) = (t.workers, &t.cpus)
        && w != c.len()
    {
        return Err(err_at(
            last(directives, "workers"),
            &format!(
                "workers {w} does not match the {} CPUs listed in cpus",
                c.len()
            ),
        ));
    }
    Ok(t)
}

/// Checks the tuning against the host, so that what cannot work there fails with the line
/// of its option before anything starts (an executor pinned to a CPU the process may not
/// use fails only when it starts, without a line): every CPU of `cpus` must be in
/// `allowed`, the process's affinity mask.
pub fn check_host(directives: &[Directive], t: &Tuning, allowed: &[usize]) -> Result<(), Error> {
    let Some(cpus) = &t.cpus else {
        return Ok(());
    };
    let missing: Vec<String> = cpus
        .iter()
        .filter(|c| !allowed.contains(c))
        .map(usize::to_string)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut allowed = allowed.to_vec();
    allowed.sort_unstable();
    Err(err_at(
        last(directives, "cpus"),
        &format!(
            "cpus: CPU {} not available to this process (it may run on {})",
            missing.join(", "),
            cpu_ranges(&allowed)
        ),
    ))
}

/// The first token of the last `name` directive (the one in effect), else of the block.
fn last<'a>(directives: &'a [Directive], name: &str) -> Option<&'a Token> {
    directives
        .iter()
        .rev()
        .find(|d| d.name == name)
        .or(directives.first())
        .and_then(|d| d.tokens.first())
}

/// `Error during parsing: MSG` at `tok` (line 0 of the unnamed file without one).
fn err_at(tok: Option<&Token>, msg: &str) -> Error {
    match tok {
        Some(tok) => Error::parsing(tok.file.clone(), tok.line, msg),
        None => Error::parsing("Corefile".into(), 0, msg),
    }
}

/// Sorted CPUs as a `0-3,6` list.
fn cpu_ranges(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// The global block's options whose values differ between `a` and `b`, by name. They all
/// shape the executors and sockets made at start, so a reload cannot apply them.
pub fn changed(a: &Tuning, b: &Tuning) -> Vec<&'static str> {
    let mut out = Vec::new();
    let mut check = |name, same: bool| {
        if !same {
            out.push(name);
        }
    };
    // Destructured so that a new option cannot be forgotten here.
    let Tuning {
        workers,
        cpus,
        udp_batch,
        udp_rcvbuf,
        udp_sndbuf,
        tcp_rcvbuf,
        tcp_sndbuf,
        tcp_max_conns,
        tcp_max_conns_per_ip,
        udp_backend,
        io_memory,
        spin_before_park,
    } = a;
    check("workers", *workers == b.workers);
    check("cpus", *cpus == b.cpus);
    check("udp_batch", *udp_batch == b.udp_batch);
    check("udp_rcvbuf", *udp_rcvbuf == b.udp_rcvbuf);
    check("udp_sndbuf", *udp_sndbuf == b.udp_sndbuf);
    check("tcp_rcvbuf", *tcp_rcvbuf == b.tcp_rcvbuf);
    check("tcp_sndbuf", *tcp_sndbuf == b.tcp_sndbuf);
    check("tcp_max_conns", *tcp_max_conns == b.tcp_max_conns);
    check(
        "tcp_max_conns_per_ip",
        *tcp_max_conns_per_ip == b.tcp_max_conns_per_ip,
    );
    check("udp_backend", *udp_backend == b.udp_backend);
    check("io_memory", *io_memory == b.io_memory);
    check("spin_before_park", *spin_before_park == b.spin_before_park);
    out
}

fn number(d: &Dispenser<'_>, s: &str, min: usize, max: usize) -> Result<usize, Error> {
    match s.parse::<usize>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(d.err(&format!("'{s}' is not a number between {min} and {max}"))),
    }
}

/// `4M`, `512K`, `1G` or plain bytes.
fn size(d: &Dispenser<'_>, s: &str) -> Result<usize, Error> {
    let (digits, mult) = match s.as_bytes().last() {
        Some(b'K' | b'k') => (&s[..s.len() - 1], 1usize << 10),
        Some(b'M' | b'm') => (&s[..s.len() - 1], 1 << 20),
        Some(b'G' | b'g') => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .filter(|n| *n <= 1 << 31)
        .ok_or_else(|| d.err(&format!("'{s}' is not a size (bytes, or with K, M or G)")))
}

/// `0-3,6` style CPU lists, as taskset and systemd's CPUAffinity take them.
fn cpu_list(d: &Dispenser<'_>, s: &str) -> Result<Vec<usize>, Error> {
    let bad = || d.err(&format!("'{s}' is not a CPU list such as 0-3,6"));
    let mut out = Vec::new();
    for part in s.split(',') {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a, b),
            None => (part, part),
        };
        let (a, b): (usize, usize) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
        if a > b || b >= 4096 {
            return Err(bad());
        }
        for c in a..=b {
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    if out.is_empty() {
        return Err(bad());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corefile::parse;

    fn tuning(text: &str) -> Result<Tuning, String> {
        let cf = parse("Corefile", text, &|_| true).map_err(|e| e.to_string())?;
        super::parse(&cf.global).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_without_a_global_block() {
        assert_eq!(tuning(". {\n whoami\n}\n").unwrap(), Tuning::default());
    }

    #[test]
    fn every_option_parses() {
        let t = tuning(
            "{\n workers 2\n cpus 0-1\n udp_batch 64\n udp_rcvbuf 8M\n udp_sndbuf 512K\n tcp_rcvbuf 65536\n tcp_sndbuf 1m\n tcp_max_conns 10\n tcp_max_conns_per_ip 3\n udp_backend glommio\n io_memory 128K\n spin_before_park 50us\n}\n. {\n whoami\n}\n",
        )
        .unwrap();
        assert_eq!(t.workers, Some(2));
        assert_eq!(t.cpus, Some(vec![0, 1]));
        assert_eq!(t.udp_batch, 64);
        assert_eq!(t.udp_rcvbuf, 8 << 20);
        assert_eq!(t.udp_sndbuf, 512 << 10);
        assert_eq!(t.tcp_rcvbuf, 65536);
        assert_eq!(t.tcp_sndbuf, 1 << 20);
        assert_eq!(t.tcp_max_conns, 10);
        assert_eq!(t.tcp_max_conns_per_ip, 3);
        assert_eq!(t.udp_backend, UdpBackend::Glommio);
        assert_eq!(t.io_memory, 128 << 10);
        assert_eq!(t.spin_before_park, std::time::Duration::from_micros(50));
    }

    #[test]
    fn changed_options_are_named() {
        let a = Tuning::default();
        assert!(changed(&a, &a.clone()).is_empty());
        let b = tuning("{\n workers 1\n io_memory 128K\n}\n").unwrap();
        assert_eq!(changed(&a, &b), vec!["workers", "io_memory"]);
    }

    #[test]
    fn cpu_lists() {
        let t = tuning("{\n cpus 0-2,5,1\n}\n").unwrap();
        assert_eq!(t.cpus, Some(vec![0, 1, 2, 5]));
    }

    #[test]
    fn cpus_the_process_may_not_use_are_an_error_at_their_line() {
        let text = "{\n udp_batch 8\n cpus 1,4-5,32\n}\n";
        let cf = parse("Corefile", text, &|_| true).unwrap();
        let t = super::parse(&cf.global).unwrap();
        assert_eq!(
            check_host(&cf.global, &t, &[3, 0, 1, 2])
                .unwrap_err()
                .to_string(),
            "Corefile:3 - Error during parsing: cpus: CPU 4, 5, 32 not available to this process (it may run on 0-3)"
        );
        assert!(check_host(&cf.global, &t, &[1, 4, 5, 32]).is_ok());
        assert!(check_host(&[], &Tuning::default(), &[0]).is_ok());
        assert_eq!(cpu_ranges(&[0, 2, 3, 4, 7, 9, 10]), "0,2-4,7,9-10");
    }

    #[test]
    fn errors_name_file_and_line() {
        assert_eq!(
            tuning("{\n  bogus 1\n}\n").unwrap_err(),
            "Corefile:2 - Error during parsing: unknown global option 'bogus'"
        );
        assert_eq!(
            tuning("{\n workers\n}\n").unwrap_err(),
            "Corefile:2 - Error during parsing: Wrong argument count or unexpected line ending after 'workers'"
        );
        assert_eq!(
            tuning("{\n udp_batch 0\n}\n").unwrap_err(),
            "Corefile:2 - Error during parsing: '0' is not a number between 1 and 1024"
        );
        assert_eq!(
            tuning("{\n cpus 3-1\n}\n").unwrap_err(),
            "Corefile:2 - Error during parsing: '3-1' is not a CPU list such as 0-3,6"
        );
        assert_eq!(
            tuning("{\n udp_rcvbuf lots\n}\n").unwrap_err(),
            "Corefile:2 - Error during parsing: 'lots' is not a size (bytes, or with K, M or G)"
        );
        assert_eq!(
            tuning("{\n cpus 0-1\n workers 3\n}\n").unwrap_err(),
            "Corefile:3 - Error during parsing: workers 3 does not match the 2 CPUs listed in cpus"
        );
        assert_eq!(
            tuning("{\n udp_backend magic\n}\n").unwrap_err(),
            "Corefile:2 - Error during parsing: unknown udp_backend 'magic' (expected mmsg or glommio)"
        );
    }
}
