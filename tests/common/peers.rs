//! Real authoritative peers for differential tests: NSD and Knot (knotd), from Debian's
//! packages (`.ci/apt-packages`), run as child processes of the test on a loopback port
//! picked free, each with a temporary directory of its own for its configuration, pid file,
//! database, journal and logs (no root-owned path, no service, no user switch), serving the
//! zone files the test gives. [`Peer::start`] returns once the server answers the SOA of
//! every zone it serves; dropping the [`Peer`] stops it, by the PIDs of the processes it
//! started.
//!
//! A missing binary skips the test with a message (see [`tool`]), except in CI (`CI=true`),
//! where it fails: CI installs the packages, so a missing one is a broken CI.

pub mod dnssec;
pub mod unbound;

use super::{Port, Server, TempDir, free_port};
use std::io::Write;
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Whether this is a CI run (`CI=true`, as CI sets it): a missing tool is then a failure,
/// never a skip.
pub fn in_ci() -> bool {
    matches!(
        std::env::var("CI")
            .as_deref()
            .map(str::to_ascii_lowercase)
            .as_deref(),
        Ok("true" | "1" | "yes")
    )
}

/// Writes a line straight to the process's standard error, past the test harness's output
/// capture (which only takes `print!`/`eprint!`), so that a skip shows in a plain
/// `cargo test` run.
pub fn loud(msg: &str) {
    let mut e = std::io::stderr().lock();
    let _ = writeln!(e, "\n*** {msg}");
}

/// The path of the program `name` (searched in `PATH`, then `/usr/sbin` and `/sbin`, where
/// Debian puts `nsd` and `knotd`), or `None` with a loud message when it is not installed
/// and this is not CI. In CI a missing program panics: `.ci/run` installs
/// `.ci/apt-packages`, so a missing one means that list or its install broke.
pub fn tool(name: &str, package: &str, test: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|d| d.join(name))
        .find(|p| p.is_file());
    match found {
        Some(p) => Some(p),
        None if in_ci() => panic!(
            "{test}: `{name}` is missing in CI (CI=true); Debian package `{package}`, \
             listed in .ci/apt-packages, should have been installed by .ci/run"
        ),
        None => {
            loud(&format!(
                "{test}: SKIPPED, `{name}` is not installed (apt-get install {package}); \
                 in CI this fails"
            ));
            None
        }
    }
}

/// Which peer server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Nsd,
    Knot,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Nsd => "nsd",
            Kind::Knot => "knot",
        }
    }

    fn program(self) -> (&'static str, &'static str) {
        match self {
            Kind::Nsd => ("nsd", "nsd"),
            Kind::Knot => ("knotd", "knot"),
        }
    }
}

/// One zone a peer serves: its origin (with the final dot) and its file (absolute).
#[derive(Clone, Debug)]
pub struct Zone {
    pub origin: String,
    pub file: PathBuf,
}

impl Zone {
    pub fn new(origin: &str, file: &Path) -> Zone {
        let file = std::fs::canonicalize(file)
            .unwrap_or_else(|e| panic!("zone file {}: {e}", file.display()));
        Zone {
            origin: origin.to_string(),
            file,
        }
    }
}

/// Settings of a peer beyond the defaults.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// NSD: `minimal-responses: yes` (no apex NS in the authority section of positive
    /// answers, no addresses in the additional section but glue for referrals and the
    /// addresses of NS targets for NS queries).
    pub nsd_minimal: bool,
    /// Lines added to the server's configuration (NSD: in `server:`; Knot: in `server:`).
    pub extra_server: Vec<String>,
    /// NSD: lines added to every `zone:` (`provide-xfr: …`, `notify: …`).
    pub nsd_zone: Vec<String>,
}

/// A running NSD or Knot; stopped on drop.
pub struct Peer {
    pub kind: Kind,
    pub port: u16,
    pub dir: TempDir,
    claim: Option<Port>,
    child: Option<Child>,
}

impl Peer {
    /// Starts `kind` serving `zones` on a free loopback port and waits (20 s at most) until
    /// it answers the SOA of each. `None` when its binary is missing outside CI (see
    /// [`tool`]); panics, with its log, when it does not start.
    pub fn start(kind: Kind, zones: &[Zone], opts: &Options, test: &str) -> Option<Peer> {
        Self::start_on(kind, free_port(), zones, opts, test)
    }

    /// [`Peer::start`] on the port `claim` (one a test claimed before, to name it in
    /// another server's configuration first).
    pub fn start_on(
        kind: Kind,
        claim: Port,
        zones: &[Zone],
        opts: &Options,
        test: &str,
    ) -> Option<Peer> {
        let (program, package) = kind.program();
        let bin = tool(program, package, test)?;
        let port = claim.port;
        let dir = TempDir::new();
        let conf = match kind {
            Kind::Nsd => nsd_conf(&dir.0, port, zones, opts),
            Kind::Knot => knot_conf(&dir.0, port, zones, opts),
        };
        let conf_path = dir.write(&format!("{}.conf", kind.name()), &conf);
        let log = std::fs::File::create(dir.0.join("out.log")).unwrap();
        let mut cmd = Command::new(&bin);
        match kind {
            // -d: in the foreground (it still forks: the PID started becomes xfrd, whose
            // child "main" forks the server process; TERM to the first stops them all).
            Kind::Nsd => cmd.arg("-d").arg("-c").arg(&conf_path),
            // knotd stays in the foreground unless given -d.
            Kind::Knot => cmd.arg("-c").arg(&conf_path),
        };
        let child = cmd
            .current_dir(&dir.0)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", bin.display()));
        let mut peer = Peer {
            kind,
            port,
            dir,
            claim: Some(claim),
            child: Some(child),
        };
        if let Err(e) = peer.wait_soa(zones, Duration::from_secs(20)) {
            panic!("{} did not start: {e}\nlog:\n{}", kind.name(), peer.log());
        }
        Some(peer)
    }

    /// The server's own output and log file.
    pub fn log(&self) -> String {
        let mut s = std::fs::read_to_string(self.dir.0.join("out.log")).unwrap_or_default();
        if let Ok(l) = std::fs::read_to_string(self.dir.0.join("nsd.log")) {
            s.push_str(&l);
        }
        s
    }

    /// Stops the server, as dropping it does, and hands back its port's claim, so that a
    /// test can start it again on the same port.
    pub fn stop(mut self) -> Port {
        if let Some(child) = self.child.take() {
            stop_tree(child);
        }
        self.claim.take().expect("a running peer holds its port")
    }

    /// The PID of the process started (NSD: its xfrd, the root of its process tree).
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(|c| c.id()).unwrap_or(0)
    }

    fn wait_soa(&mut self, zones: &[Zone], limit: Duration) -> Result<(), String> {
        let t0 = Instant::now();
        let mut pending: Vec<&Zone> = zones.iter().collect();
        while !pending.is_empty() {
            if let Some(Ok(Some(st))) = self.child.as_mut().map(|c| c.try_wait()) {
                self.child = None;
                return Err(format!("exited with {st}"));
            }
            if t0.elapsed() > limit {
                return Err(format!(
                    "no SOA answer for {} within {limit:?}",
                    pending[0].origin
                ));
            }
            pending.retain(|z| !soa_answers(self.port, &z.origin));
            if !pending.is_empty() {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Ok(())
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if let Some(child) = self.child.take() {
            stop_tree(child);
        }
    }
}

/// Whether `origin`'s SOA is answered with NOERROR, AA and one answer record over UDP on
/// `port` within 200 ms.
pub fn soa_answers(port: u16, origin: &str) -> bool {
    let q = super::query_full(0x5a5a, origin, 6, 1, None);
    let Ok(s) = UdpSocket::bind("127.0.0.1:0") else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
    if s.send_to(&q, ("127.0.0.1", port)).is_err() {
        return false;
    }
    let mut buf = [0u8; 4096];
    match s.recv(&mut buf) {
        // QR and AA, rcode 0, ANCOUNT 1
        Ok(n) if n >= 12 => {
            buf[2] & 0x84 == 0x84 && buf[3] & 0x0f == 0 && buf[6..8] == [0, 1] && buf[..2] == q[..2]
        }
        _ => false,
    }
}

/// ringdns serving `zones` with `file`, one server block per zone, on one port; waits until
/// it answers each zone's SOA.
pub fn ringdns_file(zones: &[Zone]) -> Server {
    let zones_for_wait = zones.to_vec();
    let zones = zones.to_vec();
    let s = Server::start(move |port| {
        zones
            .iter()
            .map(|z| {
                format!(
                    "{}:{port} {{\n    file {}\n}}\n",
                    z.origin,
                    z.file.display()
                )
            })
            .collect()
    });
    let t0 = Instant::now();
    let mut pending: Vec<Zone> = zones_for_wait;
    while t0.elapsed() < Duration::from_secs(20) {
        pending.retain(|z| !soa_answers(s.port, &z.origin));
        if pending.is_empty() {
            return s;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!(
        "ringdns did not answer a zone's SOA within 20 s\nstdout:\n{}\nstderr:\n{}",
        s.stdout(),
        s.stderr()
    );
}

/// The PIDs of `pid`'s children (`/proc/PID/task/*/children`).
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for t in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(t.path().join("children")) {
            out.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            );
        }
    }
    out
}

/// `pid` and its descendants (bounded depth: NSD's tree is three deep).
pub fn process_tree(pid: u32) -> Vec<u32> {
    let mut all = vec![pid];
    let mut i = 0;
    while i < all.len() && all.len() < 64 {
        let kids = children(all[i]);
        all.extend(kids);
        i += 1;
    }
    all
}

fn alive(pid: u32) -> bool {
    // A zombie still has /proc/PID; its state is Z.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .rsplit_once(") ")
            .map(|(_, rest)| rest.starts_with('Z'))
            .unwrap_or(false),
        Err(_) => false,
    }
}

/// Stops a server we started: TERM to its PID (NSD's root shuts its tree down), waits up
/// to 5 s for it and every descendant noted before, then KILLs the survivors, each by its
/// own PID, and reaps the child.
fn stop_tree(mut child: Child) {
    let root = child.id();
    let tree = process_tree(root);
    super::send_signal(root, "TERM");
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(5) {
        let _ = child.try_wait();
        if !tree.iter().any(|&p| alive(p)) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for &p in &tree {
        if p != root && alive(p) {
            super::send_signal(p, "KILL");
        }
    }
    if alive(root) {
        let _ = child.kill();
    }
    let _ = child.wait();
}

fn nsd_conf(dir: &Path, port: u16, zones: &[Zone], opts: &Options) -> String {
    let d = dir.display();
    let mut c = format!(
        "server:\n  ip-address: 127.0.0.1@{port}\n  port: {port}\n  do-ip6: no\n  \
         server-count: 1\n  username: \"\"\n  chroot: \"\"\n  zonesdir: \"{d}\"\n  \
         database: \"\"\n  zonelistfile: \"{d}/nsd.zonelist\"\n  \
         xfrdfile: \"{d}/nsd.xfrd.state\"\n  xfrdir: \"{d}\"\n  pidfile: \"{d}/nsd.pid\"\n  \
         logfile: \"{d}/nsd.log\"\n  verbosity: 1\n  hide-version: yes\n  \
         rrl-ratelimit: 0\n  rrl-whitelist-ratelimit: 0\n  minimal-responses: {}\n",
        if opts.nsd_minimal { "yes" } else { "no" }
    );
    for l in &opts.extra_server {
        c.push_str(&format!("  {l}\n"));
    }
    c.push_str("remote-control:\n  control-enable: no\n");
    for z in zones {
        c.push_str(&format!(
            "zone:\n  name: \"{}\"\n  zonefile: \"{}\"\n",
            z.origin,
            z.file.display()
        ));
        for l in &opts.nsd_zone {
            c.push_str(&format!("  {l}\n"));
        }
    }
    c
}

fn knot_conf(dir: &Path, port: u16, zones: &[Zone], opts: &Options) -> String {
    let d = dir.display();
    // No `user`: it runs as whoever started it. Storage and rundir (control socket) in the
    // test's directory; the zone files are read once and never written back
    // (zonefile-sync -1), no journal; one worker of each kind.
    let mut c = format!(
        "server:\n  rundir: \"{d}\"\n  listen: 127.0.0.1@{port}\n  udp-workers: 1\n  \
         tcp-workers: 1\n  background-workers: 1\n"
    );
    for l in &opts.extra_server {
        c.push_str(&format!("  {l}\n"));
    }
    c.push_str(&format!(
        "database:\n  storage: \"{d}/db\"\nlog:\n  - target: stderr\n    any: info\n\
         template:\n  - id: default\n    storage: \"{d}\"\n    zonefile-sync: -1\n    \
         zonefile-load: whole\n    journal-content: none\n    semantic-checks: off\n\
         zone:\n"
    ));
    for z in zones {
        c.push_str(&format!(
            "  - domain: \"{}\"\n    file: \"{}\"\n",
            z.origin,
            z.file.display()
        ));
    }
    c
}
