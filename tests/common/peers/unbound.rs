//! A validating Unbound (Debian's `unbound`) as a child process of the test, for checking
//! that signed zones served on loopback validate: its own configuration, log, pid file and
//! trust anchors in a temporary directory, listening on a loopback port claimed by the test,
//! in the foreground, with a stub zone (no priming) per signed zone pointing at the
//! authority under test.
//!
//! Nothing it sends leaves the machine: it sends from 127.0.0.1 only (`outgoing-interface`,
//! IPv4 only; the kernel refuses such a socket a route off the loopback, and Unbound logs
//! `udp connect failed: Invalid argument`), and the root is a stub zone at a loopback port
//! nothing listens on, so no root priming or other name outside the stub zones reaches the
//! network (or /etc/resolv.conf's servers).

use super::super::{Port, TempDir, free_port, query_full, udp_exchange};
use super::{stop_tree, tool};
use std::fmt::Write as _;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A zone Unbound reaches as a stub and validates from its trust anchor.
#[derive(Clone, Debug)]
pub struct StubZone {
    /// With the final dot.
    pub origin: String,
    /// The authority's UDP/TCP port on 127.0.0.1.
    pub port: u16,
    /// A DS or DNSKEY record in presentation format: the zone's trust anchor. `None` for a
    /// zone validated from its parent's DS (or proven insecure by its parent).
    pub anchor: Option<String>,
}

/// A running Unbound; stopped (by its PID) on drop.
pub struct Unbound {
    pub port: u16,
    pub dir: TempDir,
    child: Option<Child>,
    _claim: Port,
    /// The port the root stub points at, held so that no server of another test gets it.
    _dead_root: Port,
}

impl Unbound {
    /// Starts Unbound validating `zones`, with `extra` lines added to its `server:` clause
    /// (`tcp-upstream: yes`…), and waits (20 s at most) until it answers. `None`
    /// when `unbound` is missing outside CI (see [`tool`]); panics, with its log, when it
    /// does not start.
    pub fn start(zones: &[StubZone], extra: &[&str], test: &str) -> Option<Unbound> {
        let bin = tool("unbound", "unbound", test)?;
        let claim = free_port();
        let dead_root = free_port();
        let dir = TempDir::new();
        let anchors: String = zones
            .iter()
            .filter_map(|z| z.anchor.as_ref())
            .map(|a| format!("{a}\n"))
            .collect();
        dir.write("anchors", &anchors);
        let conf = config(&dir, claim.port, dead_root.port, zones, extra);
        let conf_path = dir.write("unbound.conf", &conf);
        let out = std::fs::File::create(dir.0.join("out.log")).unwrap();
        let child = Command::new(&bin)
            .arg("-d")
            .arg("-c")
            .arg(&conf_path)
            .current_dir(&dir.0)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", bin.display()));
        let mut u = Unbound {
            port: claim.port,
            dir,
            child: Some(child),
            _claim: claim,
            _dead_root: dead_root,
        };
        if let Err(e) = u.wait_ready(Duration::from_secs(20)) {
            panic!("unbound did not start: {e}\nlog:\n{}", u.log());
        }
        Some(u)
    }

    /// Its output and log file (validation failures at val-log-level 2).
    pub fn log(&self) -> String {
        let mut s = std::fs::read_to_string(self.dir.0.join("out.log")).unwrap_or_default();
        s.push_str(&std::fs::read_to_string(self.dir.0.join("unbound.log")).unwrap_or_default());
        s
    }

    /// Waits until it answers `version.bind. CH TXT` (answered locally, no lookup).
    fn wait_ready(&mut self, limit: Duration) -> Result<(), String> {
        let q = query_full(0x7b7b, "version.bind.", 16, 3, None);
        let t0 = Instant::now();
        while t0.elapsed() < limit {
            if let Some(Ok(Some(st))) = self.child.as_mut().map(|c| c.try_wait()) {
                self.child = None;
                return Err(format!("exited with {st}"));
            }
            if udp_exchange(self.port, &q, Duration::from_millis(200)).is_some() {
                return Ok(());
            }
        }
        Err(format!("no answer within {limit:?}"))
    }
}

impl Drop for Unbound {
    fn drop(&mut self) {
        if let Some(child) = self.child.take() {
            stop_tree(child);
        }
    }
}

/// The configuration: a validator in front of the iterator, the trust anchors of `zones`
/// (file `anchors`), a stub zone per zone at 127.0.0.1, the root at `dead_root`. `test.`
/// is not answered locally (Unbound's default local zone for RFC 6761's name): the test
/// zones are below it.
fn config(dir: &TempDir, port: u16, dead_root: u16, zones: &[StubZone], extra: &[&str]) -> String {
    let d = dir.0.display();
    let mut c = format!(
        "server:\n  verbosity: 1\n  interface: 127.0.0.1\n  port: {port}\n  \
         outgoing-interface: 127.0.0.1\n  do-ip4: yes\n  do-ip6: no\n  num-threads: 1\n  \
         do-daemonize: no\n  username: \"\"\n  chroot: \"\"\n  directory: \"{d}\"\n  \
         pidfile: \"{d}/unbound.pid\"\n  use-syslog: no\n  logfile: \"{d}/unbound.log\"\n  \
         log-servfail: yes\n  val-log-level: 2\n  module-config: \"validator iterator\"\n  \
         trust-anchor-file: \"{d}/anchors\"\n  trust-anchor-signaling: no\n  \
         root-key-sentinel: no\n  do-not-query-localhost: no\n  \
         access-control: 127.0.0.0/8 allow\n  local-zone: \"test.\" nodefault\n"
    );
    for l in extra {
        let _ = writeln!(c, "  {l}");
    }
    let _ = write!(
        c,
        "remote-control:\n  control-enable: no\n\
         stub-zone:\n  name: \".\"\n  stub-addr: 127.0.0.1@{dead_root}\n"
    );
    for z in zones {
        let _ = write!(
            c,
            "stub-zone:\n  name: \"{}\"\n  stub-addr: 127.0.0.1@{}\n  stub-first: no\n",
            z.origin, z.port
        );
    }
    c
}
