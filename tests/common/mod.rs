//! Shared helpers for the integration tests: start the real `ringdns` binary on loopback
//! with a Corefile written by the test, and speak DNS to it over real UDP and TCP sockets.
#![allow(dead_code)]

pub mod authority;
pub mod hickory;
pub mod kube;
pub mod metrics;
pub mod peers;

use hickory_proto::op::Message;
use ringdns::wire::QueryBuilder;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Where claimed ports are recorded so concurrent test processes never share one (ringdns
/// binds with SO_REUSEPORT, so two servers on one port would both start).
const PORT_DIR: &str = "/tmp/ringdns-test-ports";

/// A port free for UDP and TCP on 127.0.0.1 and claimed for this test until dropped.
pub struct Port {
    pub port: u16,
    claim: PathBuf,
}

impl Drop for Port {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.claim);
    }
}

/// Where test servers' ports are drawn from: below Linux's default ephemeral range
/// (32768-60999), so that no client socket of another test (which gets an ephemeral port,
/// on any loopback address of either family) can take a port between its claim and the
/// server's bind.
const SERVER_PORTS: std::ops::Range<u16> = 20000..32000;

/// Finds and claims a free port.
pub fn free_port() -> Port {
    use std::hash::{BuildHasher, Hasher};
    std::fs::create_dir_all(PORT_DIR).unwrap();
    let span = u64::from(SERVER_PORTS.end - SERVER_PORTS.start);
    for _ in 0..500 {
        let random = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        let port = SERVER_PORTS.start + (random % span) as u16;
        // Free on both wildcards, UDP and TCP: a server binds them all.
        let free = ["0.0.0.0", "::"].iter().all(|host| {
            let ip: std::net::IpAddr = host.parse().unwrap();
            UdpSocket::bind((ip, port)).is_ok() && std::net::TcpListener::bind((ip, port)).is_ok()
        });
        if !free {
            continue;
        }
        let claim = PathBuf::from(PORT_DIR).join(port.to_string());
        if std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&claim)
            .is_ok()
        {
            return Port { port, claim };
        }
    }
    panic!("no free port");
}

/// The server's address of the client's family.
pub fn server_addr(from: std::net::IpAddr, port: u16) -> SocketAddr {
    match from {
        std::net::IpAddr::V4(_) => SocketAddr::new(std::net::IpAddr::from([127, 0, 0, 1]), port),
        std::net::IpAddr::V6(_) => {
            SocketAddr::new(std::net::IpAddr::from(std::net::Ipv6Addr::LOCALHOST), port)
        }
    }
}

/// One UDP exchange from `from` (a loopback address of either family): the reply, or `None` after `wait`.
pub fn udp_from(
    from: std::net::IpAddr,
    port: u16,
    packet: &[u8],
    wait: Duration,
) -> Option<Vec<u8>> {
    let s = UdpSocket::bind(SocketAddr::new(from, 0)).expect("bind a loopback address");
    s.set_read_timeout(Some(wait)).unwrap();
    s.send_to(packet, server_addr(from, port)).unwrap();
    let mut buf = vec![0u8; 65535];
    s.recv_from(&mut buf).ok().map(|(n, _)| buf[..n].to_vec())
}

/// One TCP exchange from `from` on a connection of its own: the reply, or `None` when
/// nothing comes within `wait`.
pub fn tcp_from(
    from: std::net::IpAddr,
    port: u16,
    packet: &[u8],
    wait: Duration,
) -> Option<Vec<u8>> {
    let to = server_addr(from, port);
    use socket2::{Domain, Protocol, Socket, Type};
    let s = Socket::new(Domain::for_address(to), Type::STREAM, Some(Protocol::TCP)).unwrap();
    s.bind(&SocketAddr::new(from, 0).into())
        .expect("bind a loopback address");
    s.connect_timeout(&to.into(), Duration::from_secs(5))
        .expect("connect");
    let mut s: TcpStream = s.into();
    s.set_read_timeout(Some(wait)).unwrap();
    let mut framed = (packet.len() as u16).to_be_bytes().to_vec();
    framed.extend_from_slice(packet);
    s.write_all(&framed).unwrap();
    let mut len = [0u8; 2];
    s.read_exact(&mut len).ok()?;
    let mut buf = vec![0u8; u16::from_be_bytes(len) as usize];
    s.read_exact(&mut buf).ok()?;
    Some(buf)
}

/// The options (code, data) of the OPT record of a raw reply; `None` without one.
pub fn opt_options(reply: &[u8]) -> Option<Vec<(u16, Vec<u8>)>> {
    let r = ringdns::wire::records(reply)
        .unwrap()
        .map(Result::unwrap)
        .find(|r| r.rtype == 41)?;
    Some(
        ringdns::wire::EdnsOptions::new(&reply[r.rdata])
            .map(|(c, d)| (c, d.to_vec()))
            .collect(),
    )
}

/// Claims `port` itself, for a Corefile whose fixed ports a test keeps (kubeadm's health
/// :8080, ready :8181, prometheus :9153), so that no other test of the run is handed it
/// meanwhile; waits up to 30 s while another test holds it.
pub fn claim_port(port: u16) -> Port {
    std::fs::create_dir_all(PORT_DIR).unwrap();
    let claim = PathBuf::from(PORT_DIR).join(port.to_string());
    let t0 = std::time::Instant::now();
    loop {
        let made = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&claim);
        if let Ok(mut f) = made {
            f.write_all(std::process::id().to_string().as_bytes())
                .unwrap();
            return Port { port, claim };
        }
        // A claim left by a test process that is gone is stale.
        let holder = std::fs::read_to_string(&claim).unwrap_or_default();
        if !holder.is_empty() && !Path::new(&format!("/proc/{holder}")).exists() {
            let _ = std::fs::remove_file(&claim);
            continue;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "port {port} still claimed after 30 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A temporary directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new() -> Self {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("ringdns-test-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// Replaces `name` whole, as an editor's save or a deployment does (a new file renamed
    /// over it), so a server that polls the file never reads half of it.
    pub fn replace(&self, name: &str, text: &str) -> PathBuf {
        let tmp = self.0.join(".partial");
        std::fs::write(&tmp, text).unwrap();
        let p = self.0.join(name);
        std::fs::rename(&tmp, &p).unwrap();
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running ringdns process; stopped (by its PID) on drop.
pub struct Server {
    child: Option<Child>,
    pub port: u16,
    pub dir: TempDir,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
    _port: Option<Port>,
}

fn collect(mut r: impl Read + Send + 'static, into: Arc<Mutex<String>>) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        loop {
            match r.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => into
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n])),
            }
        }
    });
}

pub fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_ringdns")
}

impl Server {
    /// Starts ringdns on a Corefile made by `corefile(port)` and waits until it answers.
    pub fn start(corefile: impl Fn(u16) -> String) -> Server {
        Self::start_with_args(corefile, &[])
    }

    /// Like [`Server::start`] with extra command-line arguments.
    pub fn start_with_args(corefile: impl Fn(u16) -> String, args: &[&str]) -> Server {
        let port = free_port();
        let n = port.port;
        Self::launch(n, Some(port), &corefile(n), args)
    }

    /// Like [`Server::start`] with another build of the server: `program` is its binary.
    #[allow(dead_code)]
    pub fn start_program(program: &Path, corefile: impl Fn(u16) -> String) -> Server {
        let port = free_port();
        let n = port.port;
        Self::try_launch_program(program, n, Some(port), &corefile(n), &[])
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn launch(port_number: u16, claim: Option<Port>, corefile: &str, args: &[&str]) -> Server {
        Self::try_launch(port_number, claim, corefile, args).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Starts ringdns on `corefile` (already written for `port`) and waits until it serves;
    /// Err, with its output, when it exits or stays silent instead.
    pub fn try_start_on(port: Port, corefile: &str, args: &[&str]) -> Result<Server, String> {
        let n = port.port;
        Self::try_launch(n, Some(port), corefile, args)
    }

    /// [`Server::try_start_on`] with `files` (name, contents) written beside the Corefile
    /// first, in the server's working directory: the zone files a Corefile names.
    #[allow(dead_code)]
    pub fn try_start_with_files(
        port: Port,
        corefile: &str,
        args: &[&str],
        files: &[(String, Vec<u8>)],
    ) -> Result<Server, String> {
        let n = port.port;
        Self::try_launch_program_with(binary().as_ref(), n, Some(port), corefile, args, files)
    }

    /// Like [`Server::start`] with environment variables set for the server (and the
    /// Kubernetes in-cluster variables of the test's own environment removed first, so
    /// only what a test gives reaches the server).
    #[allow(dead_code)]
    pub fn start_with_env(corefile: impl Fn(u16) -> String, env: &[(&str, &str)]) -> Server {
        let port = free_port();
        let n = port.port;
        Self::try_launch_env(
            binary().as_ref(),
            n,
            Some(port),
            &corefile(n),
            &[],
            &[],
            env,
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Server::start_with_env`] that gives the error (with the server's output) instead
    /// of panicking, for starts that are meant to fail or to be slow.
    #[allow(dead_code)]
    pub fn try_start_with_env(
        corefile: &str,
        port: Port,
        env: &[(&str, &str)],
    ) -> Result<Server, String> {
        let n = port.port;
        Self::try_launch_env(binary().as_ref(), n, Some(port), corefile, &[], &[], env)
    }

    /// [`Server::try_start_with_files`] with environment variables for the server (see
    /// [`Server::start_with_env`]).
    #[allow(dead_code)]
    pub fn try_start_with_files_env(
        port: Port,
        corefile: &str,
        args: &[&str],
        files: &[(String, Vec<u8>)],
        env: &[(&str, &str)],
    ) -> Result<Server, String> {
        let n = port.port;
        Self::try_launch_env(binary().as_ref(), n, Some(port), corefile, args, files, env)
    }

    fn try_launch(
        port_number: u16,
        claim: Option<Port>,
        corefile: &str,
        args: &[&str],
    ) -> Result<Server, String> {
        Self::try_launch_program(binary().as_ref(), port_number, claim, corefile, args)
    }

    fn try_launch_program(
        program: &Path,
        port_number: u16,
        claim: Option<Port>,
        corefile: &str,
        args: &[&str],
    ) -> Result<Server, String> {
        Self::try_launch_program_with(program, port_number, claim, corefile, args, &[])
    }

    fn try_launch_program_with(
        program: &Path,
        port_number: u16,
        claim: Option<Port>,
        corefile: &str,
        args: &[&str],
        files: &[(String, Vec<u8>)],
    ) -> Result<Server, String> {
        Self::try_launch_env(program, port_number, claim, corefile, args, files, &[])
    }

    fn try_launch_env(
        program: &Path,
        port_number: u16,
        claim: Option<Port>,
        corefile: &str,
        args: &[&str],
        files: &[(String, Vec<u8>)],
        env: &[(&str, &str)],
    ) -> Result<Server, String> {
        let dir = TempDir::new();
        for (name, data) in files {
            // A name may hold directories (`zones/db.example.org`): they are made.
            let path = dir.0.join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).expect("make a directory for the server");
            }
            std::fs::write(path, data).expect("write a file for the server");
        }
        let conf = dir.write("Corefile", corefile);
        let mut child = Command::new(program)
            .arg("-conf")
            .arg(&conf)
            .args(args)
            .current_dir(&dir.0)
            .env_remove("KUBERNETES_SERVICE_HOST")
            .env_remove("KUBERNETES_SERVICE_PORT")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start ringdns");
        let stdout = Arc::new(Mutex::new(String::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        collect(child.stdout.take().unwrap(), stdout.clone());
        collect(child.stderr.take().unwrap(), stderr.clone());
        let mut s = Server {
            child: Some(child),
            port: port_number,
            dir,
            stdout,
            stderr,
            _port: claim,
        };
        s.wait_ready()?;
        Ok(s)
    }

    fn wait_ready(&mut self) -> Result<(), String> {
        let t0 = Instant::now();
        // A bare header (QDCOUNT=0): the server answers it FORMERR itself, before any block,
        // so no plugin sees or counts the probe (acl, forward, erratic would).
        let q = [0u8, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        while t0.elapsed() < Duration::from_secs(20) {
            if let Some(Ok(Some(status))) = self.child.as_mut().map(|c| c.try_wait()) {
                // Reaped: never signal that PID again.
                self.child = None;
                // Let the reader threads take the last bytes.
                std::thread::sleep(Duration::from_millis(100));
                return Err(format!(
                    "ringdns exited with {status} before answering\nstdout:\n{}\nstderr:\n{}",
                    self.stdout(),
                    self.stderr()
                ));
            }
            // The banner comes once every core serves; a server that delays its answers
            // (erratic) shows it before the probe below could see an answer.
            if self.stdout().contains("\nringdns-") || self.stdout().starts_with("ringdns-") {
                return Ok(());
            }
            if udp_exchange(self.port, &q, Duration::from_millis(100)).is_some() {
                return Ok(());
            }
        }
        Err(format!(
            "ringdns did not answer within 20s\nstdout:\n{}\nstderr:\n{}",
            self.stdout(),
            self.stderr()
        ))
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    pub fn stdout(&self) -> String {
        self.stdout.lock().unwrap().clone()
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Sends a signal (e.g. "TERM") to the server, by its PID.
    pub fn signal(&self, sig: &str) {
        send_signal(self.pid(), sig);
    }

    /// Waits for the process to exit, up to `limit`; returns its exit code.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<i32> {
        let t0 = Instant::now();
        let child = self.child.as_mut()?;
        while t0.elapsed() < limit {
            if let Ok(Some(st)) = child.try_wait() {
                self.child = None;
                return st.code();
            }
            // Short: a test may look at what the exit left behind right after it.
            std::thread::sleep(Duration::from_millis(1));
        }
        None
    }

    /// Writes `text` as the server's Corefile (aside, then renamed over it), sends SIGUSR1
    /// and waits for the verdict: true when the reload applied, false when it failed.
    /// Panics without a verdict in 10 s.
    pub fn reload(&self, text: &str) -> bool {
        const APPLIED: &str = "[INFO] Reloading complete";
        const FAILED: &str = "[ERROR] SIGUSR1: ";
        let count = |n: &str| self.stdout().matches(n).count();
        let before = (count(APPLIED), count(FAILED));
        let tmp = self.dir.write("Corefile.next", text);
        std::fs::rename(tmp, self.dir.0.join("Corefile")).unwrap();
        self.signal("USR1");
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(10) {
            if count(APPLIED) > before.0 {
                return true;
            }
            if count(FAILED) > before.1 {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("no verdict on the reload within 10s:\n{}", self.stdout());
    }

    /// Waits until stdout contains `needle`, up to `limit`.
    pub fn wait_stdout(&self, needle: &str, limit: Duration) -> bool {
        let t0 = Instant::now();
        while t0.elapsed() < limit {
            if self.stdout().contains(needle) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

/// Starts ringdns on a given port (e.g. again on the port of a server just stopped), with
/// `PORT` in the template replaced by it.
pub fn start_on_port(port: u16, template: &str) -> Server {
    Server::launch(
        port,
        None,
        &template.replace("PORT", &port.to_string()),
        &[],
    )
}

/// Sends a signal to one process we started, by PID, with kill(1).
pub fn send_signal(pid: u32, sig: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status();
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            send_signal(c.id(), "TERM");
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(5) {
                if let Ok(Some(_)) = c.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Runs ringdns expecting it to fail at start; returns (exit code, stderr).
pub fn run_expect_failure(corefile: &str) -> (i32, String) {
    let dir = TempDir::new();
    let conf = dir.write("Corefile", corefile);
    let conf = conf.to_str().unwrap();
    exit_within(&["-conf", conf], Stdio::null(), Duration::from_secs(10))
}

/// Runs the binary with `args` and `stdin`, expecting it to exit within `limit`; its exit
/// code and stderr (panics, killing it, when it does not).
pub fn exit_within(args: &[&str], stdin: Stdio, limit: Duration) -> (i32, String) {
    let mut child = Command::new(binary())
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            let mut err = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            return (st.code().unwrap_or(-1), err);
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ringdns {args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Encodes a name (presentation, case kept) in wire form.
pub fn wire_name(name: &str) -> Vec<u8> {
    ringdns_testkit::wire_name(name)
}

/// A plain query (RD set, class IN, no EDNS).
pub fn query(id: u16, name: &str, qtype: u16) -> Vec<u8> {
    query_full(id, name, qtype, 1, None)
}

/// A query with class and optional EDNS (UDP size, DO bit).
pub fn query_full(
    id: u16,
    name: &str,
    qtype: u16,
    qclass: u16,
    edns: Option<(u16, bool)>,
) -> Vec<u8> {
    let wire = wire_name(name);
    let qname = ringdns::wire::Name::from_wire(&wire).expect("a valid name");
    let q = QueryBuilder::new(qname, qtype).id(id).class(qclass);
    match edns {
        Some((size, dnssec_ok)) => q.edns(size, dnssec_ok).build(),
        None => q.build(),
    }
}

/// Sends one datagram and returns the first reply, if any arrives within `wait`.
pub fn udp_exchange(port: u16, packet: &[u8], wait: Duration) -> Option<Vec<u8>> {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(wait)).unwrap();
    s.send_to(packet, ("127.0.0.1", port)).unwrap();
    let mut buf = vec![0u8; 65535];
    match s.recv_from(&mut buf) {
        Ok((n, _)) => Some(buf[..n].to_vec()),
        Err(_) => None,
    }
}

/// A UDP exchange that must succeed, parsed.
pub fn ask(port: u16, packet: &[u8]) -> Message {
    for _ in 0..3 {
        if let Some(r) = udp_exchange(port, packet, Duration::from_secs(2)) {
            return Message::from_vec(&r).expect("reply parses");
        }
    }
    panic!("no reply over UDP");
}

/// Waits (at most 10 s) until `ok` holds for the reply to `packet` over UDP, then over TCP,
/// and returns how long that took. While a change lands, the UDP and the TCP listener (other
/// sockets, other cores) may each answer from a different side of it: each transport is
/// waited for on its own.
#[allow(dead_code)]
#[track_caller]
pub fn eventually(port: u16, packet: &[u8], ok: impl Fn(&Message) -> bool) -> Duration {
    let t0 = Instant::now();
    let over_udp = || udp_exchange(port, packet, Duration::from_secs(2));
    let over_tcp = || tcp_exchange(port, &[packet.to_vec()]).pop();
    for (transport, exchange) in [
        ("UDP", &over_udp as &dyn Fn() -> Option<Vec<u8>>),
        ("TCP", &over_tcp),
    ] {
        loop {
            let m = exchange().and_then(|r| Message::from_vec(&r).ok());
            if m.as_ref().is_some_and(&ok) {
                break;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "over {transport}: still {m:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    t0.elapsed()
}

/// Sends queries over one TCP connection (all written before any reply is read) and
/// returns the replies in arrival order.
pub fn tcp_exchange(port: u16, packets: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut out = Vec::new();
    for p in packets {
        out.extend_from_slice(&(p.len() as u16).to_be_bytes());
        out.extend_from_slice(p);
    }
    s.write_all(&out).unwrap();
    let mut replies = Vec::new();
    for _ in packets {
        let mut len = [0u8; 2];
        if s.read_exact(&mut len).is_err() {
            break;
        }
        let mut buf = vec![0u8; u16::from_be_bytes(len) as usize];
        s.read_exact(&mut buf).unwrap();
        replies.push(buf);
    }
    replies
}

/// The replies to `packet` over UDP (three tries of 2 s) and over TCP, for tests that check
/// both transports answer alike.
pub fn udp_and_tcp(port: u16, packet: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let udp = (0..3)
        .find_map(|_| udp_exchange(port, packet, Duration::from_secs(2)))
        .expect("a reply over UDP");
    let mut tcp = tcp_exchange(port, &[packet.to_vec()]);
    assert_eq!(tcp.len(), 1, "one reply over TCP");
    (udp, tcp.remove(0))
}

/// Sends one query over TCP and reads messages until the transfer ends (a second SOA, an
/// error rcode, or a single-SOA answer), at most 200 messages or 10 seconds.
pub fn tcp_transfer(port: u16, packet: &[u8]) -> Vec<Message> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut framed = (packet.len() as u16).to_be_bytes().to_vec();
    framed.extend_from_slice(packet);
    s.write_all(&framed).unwrap();
    let (mut out, mut soas) = (Vec::new(), 0);
    let t0 = Instant::now();
    while out.len() < 200 && t0.elapsed() < Duration::from_secs(10) {
        let mut len = [0u8; 2];
        s.read_exact(&mut len).expect("the transfer goes on");
        let mut buf = vec![0u8; u16::from_be_bytes(len) as usize];
        s.read_exact(&mut buf).unwrap();
        let m = Message::from_vec(&buf).expect("a transfer message parses");
        soas += m
            .answers
            .iter()
            .filter(|r| r.record_type() == hickory_proto::rr::RecordType::SOA)
            .count();
        let done = m.metadata.response_code != hickory_proto::op::ResponseCode::NoError
            || soas >= 2
            || (out.is_empty() && m.answers.len() == 1 && soas == 1);
        out.push(m);
        if done {
            break;
        }
    }
    out
}

/// The records of an AXFR of `origin` from the server on `port`, in presentation format
/// (lower-case), sorted, the closing SOA left out: what two servers' copies of a zone are
/// compared by.
pub fn axfr_records(port: u16, origin: &str) -> Vec<String> {
    let msgs = tcp_transfer(port, &query(77, origin, 252));
    let mut all: Vec<String> = msgs
        .iter()
        .flat_map(|m| m.answers.iter())
        .map(|r| r.to_string().to_ascii_lowercase())
        .collect();
    assert!(all.len() > 1, "a transfer: {all:?}");
    assert_eq!(all.first(), all.last(), "SOA first and last");
    all.pop();
    all.sort();
    all
}

/// The rcode of a raw reply (header bits only).
pub fn rcode(reply: &[u8]) -> u8 {
    reply[3] & 0x0f
}

/// A plain HTTP/1.1 GET on loopback (the health, ready and metrics endpoints): the status
/// code, the header block and the body; `None` when nothing answers within 5 s.
pub fn http_get_full(port: u16, path: &str) -> Option<(u16, String, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let code = text.split_whitespace().nth(1)?.parse().ok()?;
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    Some((code, head.to_string(), body.to_string()))
}

/// The status code and body of an HTTP GET on loopback.
pub fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    http_get_full(port, path).map(|(code, _, body)| (code, body))
}
