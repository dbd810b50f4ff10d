//! dnstap against Debian's real readers: golang-dnstap's `dnstap` (`-u SOCKET`, YAML out)
//! and libfstrm's `fstrm_capture` (`-a ADDR -p PORT -w FILE`, read back with `dnstap -r`),
//! with the real binary on loopback: the client's messages (types, addresses, names),
//! forward's upstream messages, a reader that goes away and comes back, and one that never
//! reads (queries still answered at once, drops counted).

mod common;

use common::peers::tool;
use common::{Server, TempDir, free_port, query, tcp_exchange, udp_exchange};
use std::io::{Read, Write};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A reader process the test started, stopped by its PID on drop.
struct Reader {
    child: Child,
    out: PathBuf,
}

impl Reader {
    /// `dnstap -u SOCKET -y`, its YAML into a file of `dir`.
    fn unix(dnstap: &Path, dir: &TempDir, socket: &Path, name: &str) -> Reader {
        let out = dir.0.join(name);
        let file = std::fs::File::create(&out).unwrap();
        let child = Command::new(dnstap)
            .arg("-u")
            .arg(socket)
            .arg("-y")
            .stdout(file)
            .stderr(std::fs::File::create(dir.0.join(format!("{name}.log"))).unwrap())
            .spawn()
            .unwrap();
        wait_for(|| socket.exists(), "the reader's socket");
        Reader { child, out }
    }

    /// Its log (golang-dnstap's `accepted connection N`, `closed connection N`).
    fn log(&self) -> String {
        std::fs::read_to_string(self.out.with_file_name(format!(
            "{}.log",
            self.out.file_name().unwrap().to_string_lossy()
        )))
        .unwrap_or_default()
    }

    /// What it decoded so far.
    fn text(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }

    /// Waits (5 s at most) until its output has a message matching `want`.
    fn wait_message(&self, want: impl Fn(&Msg) -> bool) -> Vec<Msg> {
        let t0 = Instant::now();
        loop {
            let msgs = messages(&self.text());
            if msgs.iter().any(&want) || t0.elapsed() > Duration::from_secs(5) {
                return msgs;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn stop(mut self) {
        common::send_signal(self.child.id(), "INT");
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(3) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_for(ok: impl Fn() -> bool, what: &str) {
    let t0 = Instant::now();
    while !ok() {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "no {what} within 5 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// One message of the reader's YAML, the fields the tests look at.
#[derive(Debug, Default, Clone)]
struct Msg {
    kind: String,
    protocol: String,
    query_address: String,
    query_port: String,
    response_address: String,
    response_port: String,
    identity: String,
    /// The wire messages as the reader printed them (dig-like), when `full`.
    text: String,
}

/// The messages of `dnstap -y` output (documents split by `---`).
fn messages(yaml: &str) -> Vec<Msg> {
    yaml.split("\n---")
        .filter(|d| d.contains("type: MESSAGE"))
        .map(|d| {
            let mut m = Msg {
                text: d.to_string(),
                ..Msg::default()
            };
            for line in d.lines() {
                let Some((k, v)) = line.trim().split_once(": ") else {
                    continue;
                };
                let v = v.trim().to_string();
                match (line.starts_with("  "), k) {
                    (true, "type") if !line.starts_with("    ") => m.kind = v,
                    (true, "socket_protocol") => m.protocol = v,
                    (true, "query_address") => m.query_address = v,
                    (true, "query_port") => m.query_port = v,
                    (true, "response_address") => m.response_address = v,
                    (true, "response_port") => m.response_port = v,
                    (false, "identity") => m.identity = v.trim_matches('"').to_string(),
                    _ => {}
                }
            }
            m
        })
        .collect()
}

/// The messages about `name` (by the question the reader printed), in order.
fn about<'a>(msgs: &'a [Msg], name: &str) -> Vec<&'a Msg> {
    let q = format!(";{name}\tIN");
    msgs.iter().filter(|m| m.text.contains(&q)).collect()
}

fn kinds(msgs: &[&Msg]) -> Vec<String> {
    msgs.iter().map(|m| m.kind.clone()).collect()
}

/// Held by the tests that flood the server with queries behind a stuck reader or sink: run
/// side by side they slow each other past the 4 s write timeout, and a writer that redials
/// then drains what the test counts on being dropped.
static FLOOD: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn flood_lock() -> std::sync::MutexGuard<'static, ()> {
    FLOOD
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn dnstap_tool(test: &str) -> Option<PathBuf> {
    tool("dnstap", "golang-github-dnstap-golang-dnstap-cli", test)
}

#[test]
fn client_and_forwarder_messages_reach_the_dnstap_reader_over_a_unix_socket() {
    let Some(dnstap) = dnstap_tool("dnstap unix") else {
        return;
    };
    let dir = TempDir::new();
    let socket = dir.0.join("tap.sock");
    let reader = Reader::unix(&dnstap, &dir, &socket, "tap.yaml");
    let up = Server::start(|p| format!("{{\n workers 1\n}}\n.:{p} {{\n whoami\n}}\n"));
    let up_port = up.port;
    let sock = socket.display().to_string();
    let mut server = Server::start(|p| {
        format!(
            "{{\n workers 1\n}}\n.:{p} {{\n dnstap unix://{sock} full {{\n identity tap-test\n }}\n forward fwd.example 127.0.0.1:{up_port}\n whoami\n}}\n"
        )
    });
    // Queries before the writer connected are dropped (CoreDNS's too): ask until one is
    // seen.
    let t0 = Instant::now();
    let mut id = 1;
    while about(&messages(&reader.text()), "local.example.").is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "no tap of local.example."
        );
        udp_exchange(
            server.port,
            &query(id, "local.example.", 1),
            Duration::from_secs(3),
        )
        .expect("answered");
        id += 1;
        std::thread::sleep(Duration::from_millis(50));
    }
    udp_exchange(
        server.port,
        &query(100, "a.fwd.example.", 1),
        Duration::from_secs(2),
    )
    .expect("forwarded over UDP");
    let tcp = tcp_exchange(server.port, &[query(101, "b.fwd.example.", 1)]);
    assert_eq!(tcp.len(), 1, "forwarded over TCP");
    let msgs = reader
        .wait_message(|m| m.kind == "CLIENT_RESPONSE" && m.text.contains(";b.fwd.example.\tIN"));

    let local = about(&msgs, "local.example.");
    assert_eq!(
        kinds(&local)[..2],
        ["CLIENT_QUERY", "CLIENT_RESPONSE"],
        "{local:#?}"
    );
    for m in &local {
        assert_eq!(
            (m.protocol.as_str(), m.query_address.as_str()),
            ("UDP", "127.0.0.1")
        );
        assert!(m.query_port.parse::<u16>().unwrap() > 0);
        assert_eq!(m.identity, "tap-test");
    }
    // A UDP query forwarded: the client's messages around forward's, as in CoreDNS.
    let a = about(&msgs, "a.fwd.example.");
    assert_eq!(
        kinds(&a),
        [
            "CLIENT_QUERY",
            "FORWARDER_QUERY",
            "FORWARDER_RESPONSE",
            "CLIENT_RESPONSE"
        ],
        "{a:#?}"
    );
    for m in &a[1..3] {
        assert_eq!(m.protocol, "UDP");
        assert_eq!(m.response_address, "127.0.0.1");
        assert_eq!(m.response_port, up_port.to_string());
    }
    // The upstream's reply is in the FORWARDER_RESPONSE (whoami's additional section).
    assert!(a[2].text.contains("ADDITIONAL SECTION"), "{}", a[2].text);
    assert!(a[3].text.contains("status: NOERROR"), "{}", a[3].text);
    let b = about(&msgs, "b.fwd.example.");
    assert_eq!(
        kinds(&b),
        [
            "CLIENT_QUERY",
            "FORWARDER_QUERY",
            "FORWARDER_RESPONSE",
            "CLIENT_RESPONSE"
        ],
        "{b:#?}"
    );
    assert!(b.iter().all(|m| m.protocol == "TCP"), "{b:#?}");
    assert!(b[3].text.contains("status: NOERROR"), "{}", b[3].text);
    assert!(b[2].text.contains("ADDITIONAL SECTION"), "{}", b[2].text);

    // A stop ends the stream (STOP, FINISH) before the server exits.
    server.signal("TERM");
    assert_eq!(server.wait_exit(Duration::from_secs(10)), Some(0));
    reader.stop();
}

#[test]
fn fstrm_capture_takes_the_stream_over_tcp() {
    let Some(dnstap) = dnstap_tool("dnstap tcp") else {
        return;
    };
    let Some(capture) = tool("fstrm_capture", "fstrm-bin", "dnstap tcp") else {
        return;
    };
    let dir = TempDir::new();
    let file = dir.0.join("capture.fstrm");
    let port = free_port();
    let tap_port = port.port;
    drop(port);
    let mut child = Command::new(capture)
        .args(["-t", "protobuf:dnstap.Dnstap", "-a", "127.0.0.1", "-p"])
        .arg(tap_port.to_string())
        .arg("-w")
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(
        || std::net::TcpStream::connect(("127.0.0.1", tap_port)).is_ok(),
        "fstrm_capture listening",
    );
    let mut server = Server::start(|p| {
        format!("{{\n workers 1\n}}\n.:{p} {{\n dnstap tcp://127.0.0.1:{tap_port}\n whoami\n}}\n")
    });
    // Give the writer its connection, then query: without `full` the messages carry
    // addresses and times but no wire messages (as CoreDNS).
    std::thread::sleep(Duration::from_millis(500));
    for id in 0..5 {
        udp_exchange(
            server.port,
            &query(id, "tcp.example.", 1),
            Duration::from_secs(3),
        )
        .expect("answered");
    }
    server.signal("TERM");
    assert_eq!(server.wait_exit(Duration::from_secs(10)), Some(0));
    common::send_signal(child.id(), "INT");
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() && t0.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    let out = Command::new(dnstap)
        .arg("-r")
        .arg(&file)
        .arg("-y")
        .output()
        .unwrap();
    let msgs = messages(&String::from_utf8_lossy(&out.stdout));
    let client: Vec<&Msg> = msgs
        .iter()
        .filter(|m| m.kind.starts_with("CLIENT_") && m.protocol == "UDP")
        .collect();
    assert!(client.len() >= 10, "{msgs:#?}");
    for m in &client {
        assert_eq!(m.query_address, "127.0.0.1");
        assert!(!m.text.contains("query_message") && !m.text.contains("response_message"));
    }
    assert_eq!(
        client.iter().filter(|m| m.kind == "CLIENT_QUERY").count(),
        client
            .iter()
            .filter(|m| m.kind == "CLIENT_RESPONSE")
            .count()
    );
}

#[test]
fn a_reader_that_goes_away_and_comes_back_gets_the_stream_again() {
    let Some(dnstap) = dnstap_tool("dnstap reconnect") else {
        return;
    };
    let dir = TempDir::new();
    let socket = dir.0.join("re.sock");
    let first = Reader::unix(&dnstap, &dir, &socket, "first.yaml");
    let sock = socket.display().to_string();
    let server = Server::start(|p| {
        format!("{{\n workers 1\n}}\n.:{p} {{\n dnstap {sock} full\n whoami\n}}\n")
    });
    let seen = |r: &Reader, name: &str, mut id: u16| {
        let t0 = Instant::now();
        while about(&messages(&r.text()), name).is_empty() {
            assert!(
                t0.elapsed() < Duration::from_secs(15),
                "{name} never reached the reader"
            );
            // An answer lost to a loaded machine is asked again; the loop is bounded.
            let _ = udp_exchange(server.port, &query(id, name, 1), Duration::from_secs(3));
            id = id.wrapping_add(1);
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    seen(&first, "before.example.", 1);
    first.stop();
    let _ = std::fs::remove_file(&socket);
    // No reader: queries are answered all the same.
    for id in 0..20 {
        udp_exchange(
            server.port,
            &query(200 + id, "gone.example.", 1),
            Duration::from_secs(3),
        )
        .expect("answered without a reader");
    }
    let second = Reader::unix(&dnstap, &dir, &socket, "second.yaml");
    // The writer redials within CoreDNS's 10 s.
    seen(&second, "after.example.", 300);
}

/// A reader that takes the handshake and then never reads: the kernel's buffer fills, then
/// the core's queue, and messages are dropped while queries are answered at once.
#[test]
fn a_reader_that_never_reads_costs_drops_not_answers() {
    let _flood = flood_lock();
    let dir = TempDir::new();
    let socket = dir.0.join("stuck.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let over = done.clone();
    let stuck = std::thread::spawn(move || {
        // Hold every connection open unread after its handshake (at most 4, for 30 s).
        let mut held = Vec::new();
        listener.set_nonblocking(true).unwrap();
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(30)
            && held.len() < 4
            && !over.load(std::sync::atomic::Ordering::Relaxed)
        {
            match listener.accept() {
                Ok((mut s, _)) => {
                    s.set_nonblocking(false).unwrap();
                    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                    let mut ready = [0u8; 42];
                    if s.read_exact(&mut ready).is_err() {
                        continue;
                    }
                    let mut accept =
                        vec![0, 0, 0, 0, 0, 0, 0, 34, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 22];
                    accept.extend_from_slice(b"protobuf:dnstap.Dnstap");
                    s.write_all(&accept).unwrap();
                    let mut start = [0u8; 42];
                    let _ = s.read_exact(&mut start);
                    held.push(s);
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    });
    let sock = socket.display().to_string();
    let metrics = free_port();
    let mport = metrics.port;
    drop(metrics);
    let server = Server::start(|p| {
        format!(
            "{{\n workers 1\n}}\n.:{p} {{\n prometheus 127.0.0.1:{mport}\n dnstap unix://{sock} full\n whoami\n}}\n"
        )
    });
    std::thread::sleep(Duration::from_millis(300));
    // 2 messages a query: 6 000 queries overfill a 10 000-message queue behind a full
    // socket buffer.
    flood_without_waiting(&server, "stuck.example.");
    let page = common::metrics::scrape_until(mport, |t| {
        common::metrics::value(
            t,
            "coredns_dnstap_dropped_total",
            &[("endpoint", &format!("unix://{sock}"))],
        )
        .is_some_and(|v| v > 0.0)
    });
    let dropped = common::metrics::value(
        &page,
        "coredns_dnstap_dropped_total",
        &[("endpoint", &format!("unix://{sock}"))],
    )
    .unwrap_or(0.0);
    assert!(dropped >= 1_000.0, "dropped {dropped}\n{page}");
    drop(server);
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    stuck.join().unwrap();
}

/// Frame Streams' control frame `kind` with the dnstap content type (none when `ct` is
/// false), as the test's own TLS reader and file writer send them.
fn control(kind: u32, ct: bool) -> Vec<u8> {
    let ctype = b"protobuf:dnstap.Dnstap";
    let fields = if ct { 8 + ctype.len() } else { 0 };
    let mut out = vec![0, 0, 0, 0];
    out.extend_from_slice(&((4 + fields) as u32).to_be_bytes());
    out.extend_from_slice(&kind.to_be_bytes());
    if ct {
        out.extend_from_slice(&1u32.to_be_bytes());
        out.extend_from_slice(&(ctype.len() as u32).to_be_bytes());
        out.extend_from_slice(ctype);
    }
    out
}

/// Reads a control frame (escape, length, body) and returns its type.
fn read_control(s: &mut impl Read) -> std::io::Result<u32> {
    let mut head = [0u8; 8];
    s.read_exact(&mut head)?;
    assert_eq!(head[..4], [0, 0, 0, 0], "a control frame");
    let mut body = vec![0u8; u32::from_be_bytes(head[4..].try_into().unwrap()) as usize];
    s.read_exact(&mut body)?;
    Ok(u32::from_be_bytes(body[..4].try_into().unwrap()))
}

/// A TLS listener on loopback with a self-signed certificate for `tap.test`.
fn tls_listener() -> (std::net::TcpListener, std::sync::Arc<rustls::ServerConfig>) {
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
    let ck = rcgen::generate_simple_self_signed(vec!["tap.test".to_string()]).unwrap();
    let chain = vec![CertificateDer::from(ck.cert.der().to_vec())];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(ck.signing_key.serialize_der()));
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    (listener, std::sync::Arc::new(config))
}

/// The first connection to `listener` (within 10 s), as a TLS stream not yet handshaken.
fn tls_accept(
    listener: &std::net::TcpListener,
    config: std::sync::Arc<rustls::ServerConfig>,
) -> rustls::StreamOwned<rustls::ServerConnection, std::net::TcpStream> {
    listener.set_nonblocking(true).unwrap();
    let t0 = Instant::now();
    let tcp = loop {
        match listener.accept() {
            Ok((tcp, _)) => break tcp,
            Err(_) if t0.elapsed() < Duration::from_secs(10) => {
                std::thread::sleep(Duration::from_millis(10))
            }
            Err(e) => panic!("no connection from the server within 10 s: {e}"),
        }
    };
    tcp.set_nonblocking(false).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    rustls::StreamOwned::new(rustls::ServerConnection::new(config).unwrap(), tcp)
}

/// Without `skipverify` the reader's certificate is checked (against the system's roots,
/// which do not hold the test's self-signed one): the server refuses the handshake.
#[test]
fn a_tls_reader_with_an_unknown_certificate_is_refused_without_skipverify() {
    let (listener, config) = tls_listener();
    let tap_port = listener.local_addr().unwrap().port();
    let reader = std::thread::spawn(move || {
        let mut tls = tls_accept(&listener, config);
        read_control(&mut tls).map_err(|e| e.to_string())
    });
    let server = Server::start(|p| {
        format!("{{\n workers 1\n}}\n.:{p} {{\n dnstap tls://127.0.0.1:{tap_port}\n whoami\n}}\n")
    });
    let got = reader.join().unwrap();
    got.expect_err("the handshake must fail");
    // The server says why, as CoreDNS's "No connection to dnstap endpoint".
    let said = |needle: &str| server.stdout().contains(needle) || server.stderr().contains(needle);
    let t0 = Instant::now();
    while !said("No connection to dnstap endpoint") && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        said("No connection to dnstap endpoint") && said("certificate"),
        "{}\n{}",
        server.stdout(),
        server.stderr()
    );
    drop(server);
}

/// A `tls://` reader: the test terminates TLS (a self-signed certificate, so the server
/// needs `skipverify`) and speaks Frame Streams itself, and writes the data frames it got
/// into a Frame Streams file that golang-dnstap's `dnstap -r` decodes.
#[test]
fn a_tls_reader_gets_the_stream_with_skipverify() {
    let Some(dnstap) = dnstap_tool("dnstap tls") else {
        return;
    };
    let dir = TempDir::new();
    let (listener, config) = tls_listener();
    let tap_port = listener.local_addr().unwrap().port();
    let file = dir.0.join("tls.fstrm");
    let path = file.clone();
    let reader = std::thread::spawn(move || {
        let mut tls = tls_accept(&listener, config);
        assert_eq!(read_control(&mut tls).unwrap(), 4, "READY");
        tls.write_all(&control(1, true)).unwrap();
        tls.flush().unwrap();
        assert_eq!(read_control(&mut tls).unwrap(), 2, "START");
        let mut out = control(2, true);
        let mut stopped = false;
        loop {
            let mut len = [0u8; 4];
            if tls.read_exact(&mut len).is_err() {
                break;
            }
            let n = u32::from_be_bytes(len) as usize;
            if n == 0 {
                // STOP: FINISH back.
                let mut rest = [0u8; 8];
                tls.read_exact(&mut rest).unwrap();
                assert_eq!(rest, [0, 0, 0, 4, 0, 0, 0, 3], "STOP");
                tls.write_all(&control(5, false)).unwrap();
                tls.flush().unwrap();
                stopped = true;
                break;
            }
            let mut frame = vec![0u8; n];
            tls.read_exact(&mut frame).unwrap();
            out.extend_from_slice(&len);
            out.extend_from_slice(&frame);
        }
        out.extend_from_slice(&control(3, false));
        std::fs::write(&path, out).unwrap();
        stopped
    });
    let mut server = Server::start(|p| {
        format!(
            "{{\n workers 1\n}}\n.:{p} {{\n dnstap tls://127.0.0.1:{tap_port} full {{\n skipverify\n }}\n whoami\n}}\n"
        )
    });
    std::thread::sleep(Duration::from_millis(500));
    for id in 0..3 {
        udp_exchange(
            server.port,
            &query(id, "tls.example.", 1),
            Duration::from_secs(3),
        )
        .expect("answered");
    }
    std::thread::sleep(Duration::from_millis(300));
    server.signal("TERM");
    assert_eq!(server.wait_exit(Duration::from_secs(10)), Some(0));
    assert!(reader.join().unwrap(), "the stream ended with STOP");
    let out = Command::new(dnstap)
        .arg("-r")
        .arg(&file)
        .arg("-y")
        .output()
        .unwrap();
    let msgs = messages(&String::from_utf8_lossy(&out.stdout));
    let tls = about(&msgs, "tls.example.");
    assert_eq!(
        tls.iter().filter(|m| m.kind == "CLIENT_QUERY").count(),
        3,
        "{msgs:#?}"
    );
    assert_eq!(
        tls.iter().filter(|m| m.kind == "CLIENT_RESPONSE").count(),
        3
    );
}

/// A reload ends the old configuration's stream (STOP, FINISH: the reader closes that
/// connection) and the new one's writer connects with the new settings.
#[test]
fn a_reload_ends_the_old_stream_and_starts_the_new_one() {
    let Some(dnstap) = dnstap_tool("dnstap reload") else {
        return;
    };
    let dir = TempDir::new();
    let socket = dir.0.join("reload.sock");
    let reader = Reader::unix(&dnstap, &dir, &socket, "reload.yaml");
    let sock = socket.display().to_string();
    let corefile = |p: u16, id: &str| {
        format!(
            "{{\n workers 1\n}}\n.:{p} {{\n dnstap {sock} full {{\n identity {id}\n }}\n whoami\n}}\n"
        )
    };
    let server = Server::start(|p| corefile(p, "one"));
    let tapped_by = |id: &str, name: &str, first: u16| {
        let t0 = Instant::now();
        let mut q = first;
        while !messages(&reader.text())
            .iter()
            .any(|m| m.identity == id && m.text.contains(&format!(";{name}\tIN")))
        {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "no {name} from {id}"
            );
            udp_exchange(server.port, &query(q, name, 1), Duration::from_secs(3))
                .expect("answered");
            q = q.wrapping_add(1);
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    tapped_by("one", "first.example.", 1);
    assert!(
        !reader.log().contains("closed connection"),
        "{}",
        reader.log()
    );
    assert!(
        server.reload(&corefile(server.port, "two")),
        "{}",
        server.stdout()
    );
    tapped_by("two", "second.example.", 100);
    wait_for(
        || reader.log().contains("closed connection 1"),
        "end of the old stream",
    );
}

// ---- `dnstap listen`: sinks of the test's own dial in ----

/// What a test sink decoded: the type, the `extra` field and the wire messages of each
/// data frame, in order, and how its stream ended.
#[derive(Default)]
struct Seen {
    frames: Vec<Tapped>,
    /// The server ended the stream with STOP (and got FINISH back).
    stopped: bool,
}

/// One data frame, decoded with the plugin's dnstap schema.
#[derive(Debug, Clone)]
struct Tapped {
    kind: i32,
    identity: Vec<u8>,
    extra: Option<String>,
    /// The query or reply in wire form (`full`).
    wire: Vec<u8>,
    response_port: Option<u32>,
}

const CLIENT_QUERY: i32 = 5;
const CLIENT_RESPONSE: i32 = 6;
const FORWARDER_QUERY: i32 = 7;
const FORWARDER_RESPONSE: i32 = 8;

/// A dnstap sink of the test's own, a real Frame Streams reader: it dials the server's
/// `listen` socket (again until the listener is up, 10 s at most), answers READY with
/// ACCEPT, takes START, decodes every data frame, and answers STOP with FINISH. With
/// `stall` it stops reading right after the handshake (a sink that is stuck).
struct TestSink {
    seen: std::sync::Arc<std::sync::Mutex<Seen>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

trait Stream: Read + Write + Send + 'static {}
impl<T: Read + Write + Send + 'static> Stream for T {}

impl TestSink {
    fn dial<S: Stream>(
        connect: impl Fn() -> std::io::Result<S> + Send + 'static,
        stall: bool,
    ) -> TestSink {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Seen::default()));
        let mine = seen.clone();
        let thread = std::thread::spawn(move || {
            let t0 = Instant::now();
            let mut s = loop {
                match connect() {
                    Ok(s) => break s,
                    Err(e) if t0.elapsed() > Duration::from_secs(10) => {
                        panic!("could not reach the listener in 10 s: {e}")
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(50)),
                }
            };
            assert_eq!(read_control(&mut s).unwrap(), 4, "READY first");
            s.write_all(&control(1, true)).unwrap();
            s.flush().unwrap();
            assert_eq!(read_control(&mut s).unwrap(), 2, "START after ACCEPT");
            if stall {
                // Hold the connection unread until the server gives up on it (a write
                // that does not progress for 4 s) or 30 s passed.
                let t0 = Instant::now();
                while t0.elapsed() < Duration::from_secs(30) {
                    std::thread::sleep(Duration::from_millis(100));
                    if mine.lock().unwrap().stopped {
                        break;
                    }
                }
                return;
            }
            loop {
                let mut len = [0u8; 4];
                if s.read_exact(&mut len).is_err() {
                    return;
                }
                let n = u32::from_be_bytes(len) as usize;
                if n == 0 {
                    let mut rest = [0u8; 8];
                    s.read_exact(&mut rest).unwrap();
                    assert_eq!(rest, [0, 0, 0, 4, 0, 0, 0, 3], "STOP");
                    s.write_all(&control(5, false)).unwrap();
                    s.flush().unwrap();
                    mine.lock().unwrap().stopped = true;
                    return;
                }
                let mut frame = vec![0u8; n];
                s.read_exact(&mut frame).unwrap();
                let d = ringdns_plugin_dnstap::decode(&frame).expect("a dnstap frame");
                let m = d.message.expect("a message");
                mine.lock().unwrap().frames.push(Tapped {
                    kind: m.r#type,
                    identity: d.identity.unwrap_or_default(),
                    extra: d.extra.map(|e| String::from_utf8(e).unwrap()),
                    wire: m.query_message.or(m.response_message).unwrap_or_default(),
                    response_port: m.response_port,
                });
            }
        });
        TestSink {
            seen,
            thread: Some(thread),
        }
    }

    fn unix(path: &Path, stall: bool) -> TestSink {
        let path = path.to_path_buf();
        TestSink::dial(
            move || {
                let s = std::os::unix::net::UnixStream::connect(&path)?;
                s.set_read_timeout(Some(Duration::from_secs(15)))?;
                Ok(s)
            },
            stall,
        )
    }

    fn tcp(port: u16) -> TestSink {
        TestSink::dial(
            move || {
                let s = std::net::TcpStream::connect(("127.0.0.1", port))?;
                s.set_read_timeout(Some(Duration::from_secs(15)))?;
                Ok(s)
            },
            false,
        )
    }

    /// The frames about `name` (by the wire name in their DNS message).
    fn about(&self, name: &str) -> Vec<Tapped> {
        let wire = common::wire_name(name);
        self.seen
            .lock()
            .unwrap()
            .frames
            .iter()
            .filter(|f| f.wire.windows(wire.len()).any(|w| w == wire))
            .cloned()
            .collect()
    }

    fn count(&self, kind: i32) -> usize {
        let seen = self.seen.lock().unwrap();
        seen.frames.iter().filter(|f| f.kind == kind).count()
    }

    /// Waits (10 s at most) until `ok` holds for it.
    fn wait(&self, what: &str, ok: impl Fn(&TestSink) -> bool) {
        let t0 = Instant::now();
        while !ok(self) {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "no {what} within 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for its stream to end; whether it ended with STOP.
    fn end(mut self) -> bool {
        self.thread.take().unwrap().join().unwrap();
        self.seen.lock().unwrap().stopped
    }
}

/// Queries `name` until every sink saw its CLIENT_RESPONSE (the sinks connect and the
/// cores learn of them a moment after the server started).
fn until_tapped(port: u16, name: &str, sinks: &[&TestSink]) {
    let t0 = Instant::now();
    let mut id = 1u16;
    while !sinks
        .iter()
        .all(|s| s.about(name).iter().any(|f| f.kind == CLIENT_RESPONSE))
    {
        assert!(t0.elapsed() < Duration::from_secs(10), "no tap of {name}");
        udp_exchange(port, &query(id, name, 1), Duration::from_secs(3)).expect("answered");
        id = id.wrapping_add(1);
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn two_sinks_on_a_unix_listener_each_get_the_whole_stream() {
    let dir = TempDir::new();
    let socket = dir.0.join("listen.sock");
    let sock = socket.display().to_string();
    let mut server = Server::start(|p| {
        format!(
            "{{\n workers 2\n}}\n.:{p} {{\n dnstap listen unix://{sock} full {{\n identity listener\n extra plain\n }}\n whoami\n}}\n"
        )
    });
    let a = TestSink::unix(&socket, false);
    let b = TestSink::unix(&socket, false);
    until_tapped(server.port, "warm.example.", &[&a, &b]);
    for i in 0..20u16 {
        let name = format!("n{i}.listen.example.");
        udp_exchange(server.port, &query(i, &name, 1), Duration::from_secs(3)).expect("answered");
    }
    for sink in [&a, &b] {
        sink.wait("the last query's reply", |s| {
            s.about("n19.listen.example.")
                .iter()
                .any(|f| f.kind == CLIENT_RESPONSE)
        });
        for i in 0..20 {
            let got = sink.about(&format!("n{i}.listen.example."));
            let kinds: Vec<i32> = got.iter().map(|f| f.kind).collect();
            assert_eq!(kinds, [CLIENT_QUERY, CLIENT_RESPONSE], "n{i}: {got:?}");
            for f in &got {
                assert_eq!(f.identity, b"listener");
                assert_eq!(f.extra.as_deref(), Some("plain"));
            }
        }
    }
    // A stop ends both streams with STOP (the sinks answer FINISH) before the exit, and
    // the socket file goes with the listener.
    server.signal("TERM");
    assert_eq!(server.wait_exit(Duration::from_secs(10)), Some(0));
    assert!(a.end() && b.end(), "both streams ended with STOP");
    assert!(!socket.exists(), "the listener's socket file is removed");
}

#[test]
fn a_tcp_sink_sees_extra_filled_in_from_the_request_and_forward_upstream() {
    let up = Server::start(|p| format!("{{\n workers 1\n}}\n.:{p} {{\n whoami\n}}\n"));
    let up_port = up.port;
    let tap = free_port();
    let tap_port = tap.port;
    drop(tap);
    let server = Server::start(|p| {
        format!(
            "{{\n workers 1\n}}\n.:{p} {{\n metadata\n dnstap listen tcp://127.0.0.1:{tap_port} full {{\n extra \"up={{/forward/upstream}} q={{name}} {{type}} {{proto}} rc={{rcode}} {{bogus}}\"\n }}\n forward fwd.example 127.0.0.1:{up_port}\n whoami\n}}\n"
        )
    });
    let sink = TestSink::tcp(tap_port);
    until_tapped(server.port, "local.example.", &[&sink]);
    let local = sink.about("local.example.");
    assert!(
        local
            .iter()
            .all(|f| f.extra.as_deref() == Some("up=- q=local.example. A udp rc=- {bogus}")),
        "{local:?}"
    );
    udp_exchange(
        server.port,
        &query(7, "a.fwd.example.", 1),
        Duration::from_secs(3),
    )
    .expect("forwarded");
    tcp_exchange(server.port, &[query(8, "b.fwd.example.", 28)]);
    sink.wait("b.fwd.example.'s reply", |s| {
        s.about("b.fwd.example.")
            .iter()
            .any(|f| f.kind == CLIENT_RESPONSE)
    });
    let up_label = format!("up=127.0.0.1:{up_port}");
    for (name, rest) in [("a.fwd.example.", "A udp"), ("b.fwd.example.", "AAAA tcp")] {
        let got = sink.about(name);
        let kinds: Vec<i32> = got.iter().map(|f| f.kind).collect();
        assert_eq!(
            kinds,
            [
                CLIENT_QUERY,
                FORWARDER_QUERY,
                FORWARDER_RESPONSE,
                CLIENT_RESPONSE
            ],
            "{got:?}"
        );
        let extra = |up: &str| format!("{up} q={name} {rest} rc=- {{bogus}}");
        // The query is tapped before forward ran (its upstream not published yet, as in
        // CoreDNS); forward's messages and the reply after it published.
        assert_eq!(got[0].extra, Some(extra("up=-")), "{got:?}");
        for f in &got[1..] {
            assert_eq!(f.extra, Some(extra(&up_label)), "{got:?}");
        }
        assert_eq!(got[1].response_port, Some(u32::from(up_port)));
    }
    drop(server);
}

#[test]
fn a_sink_that_stops_reading_costs_its_own_drops_not_the_other_sinks_or_the_answers() {
    let _flood = flood_lock();
    let dir = TempDir::new();
    let socket = dir.0.join("slow.sock");
    let sock = socket.display().to_string();
    let metrics = free_port();
    let mport = metrics.port;
    drop(metrics);
    let server = Server::start(|p| {
        format!(
            "{{\n workers 1\n}}\n.:{p} {{\n prometheus 127.0.0.1:{mport}\n dnstap listen {sock} full\n whoami\n}}\n"
        )
    });
    let good = TestSink::unix(&socket, false);
    until_tapped(server.port, "first.example.", &[&good]);
    let stuck = TestSink::unix(&socket, true);
    // The stuck sink is connected (the good one's stream shows a query after it was).
    std::thread::sleep(Duration::from_millis(600));
    let before = good.count(CLIENT_RESPONSE);
    // 2 messages a query, ~200 bytes each with `full`: far more than the stuck sink's
    // socket buffers hold.
    flood_without_waiting(&server, "slow.example.");
    // The good sink gets every reply; the stuck one costs drops (a full queue, or what was
    // queued when its connection was closed after a write stalled for 4 s).
    good.wait("all 6 000 replies", |g| {
        g.count(CLIENT_RESPONSE) - before >= 6_000
    });
    assert_eq!(good.count(CLIENT_RESPONSE) - before, 6_000);
    let label = [("endpoint", sock.as_str())];
    let page = common::metrics::scrape_until(mport, |t| {
        common::metrics::value(t, "coredns_dnstap_dropped_total", &label)
            .is_some_and(|v| v >= 1_000.0)
    });
    let dropped = common::metrics::value(&page, "coredns_dnstap_dropped_total", &label).unwrap();
    assert!(dropped >= 1_000.0, "dropped {dropped}\n{page}");
    assert!(
        server.wait_stdout("closed: i/o timeout", Duration::from_secs(10)),
        "the stuck sink's connection is closed\n{}",
        server.stdout()
    );
    // After that the good sink still gets the stream.
    until_tapped(server.port, "after.example.", &[&good]);
    drop(server);
    stuck.end();
}

/// A CA, a server certificate for `tap.test` and a client certificate, all signed by it;
/// PEM files in `dir`: (ca, cert, key, client cert, client key).
fn tls_files(dir: &TempDir) -> [PathBuf; 5] {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let leaf = |name: &str| {
        let key = KeyPair::generate().unwrap();
        let cert = CertificateParams::new(vec![name.to_string()])
            .unwrap()
            .signed_by(&key, &issuer)
            .unwrap();
        (cert.pem(), key.serialize_pem())
    };
    let (cert, key) = leaf("tap.test");
    let (client, client_key) = leaf("sink.test");
    [
        dir.write("ca.pem", &ca.pem()),
        dir.write("cert.pem", &cert),
        dir.write("key.pem", &key),
        dir.write("client.pem", &client),
        dir.write("client-key.pem", &client_key),
    ]
}

/// A TLS client that trusts `ca` and offers the client certificate when given.
fn sink_tls(ca: &Path, client: Option<(&Path, &Path)>) -> std::sync::Arc<rustls::ClientConfig> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(ca).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let b = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let config = match client {
        Some((cert, key)) => b
            .with_client_auth_cert(
                CertificateDer::pem_file_iter(cert)
                    .unwrap()
                    .map(|c| c.unwrap())
                    .collect(),
                PrivateKeyDer::from_pem_file(key).unwrap(),
            )
            .unwrap(),
        None => b.with_no_client_auth(),
    };
    std::sync::Arc::new(config)
}

/// A TLS connection to the listener, handshaken (the server's certificate checked for
/// `tap.test`), with a read timeout.
fn tls_dial(
    port: u16,
    config: std::sync::Arc<rustls::ClientConfig>,
) -> std::io::Result<rustls::StreamOwned<rustls::ClientConnection, std::net::TcpStream>> {
    let mut tcp = std::net::TcpStream::connect(("127.0.0.1", port))?;
    tcp.set_read_timeout(Some(Duration::from_secs(15)))?;
    let name = rustls::pki_types::ServerName::try_from("tap.test").unwrap();
    let mut conn = rustls::ClientConnection::new(config, name).map_err(std::io::Error::other)?;
    while conn.is_handshaking() {
        conn.complete_io(&mut tcp)?;
    }
    Ok(rustls::StreamOwned::new(conn, tcp))
}

#[test]
fn a_tls_listener_takes_a_sink_with_a_client_certificate_and_refuses_one_without() {
    let dir = TempDir::new();
    let [ca, cert, key, client, client_key] = tls_files(&dir);
    let tap = free_port();
    let tap_port = tap.port;
    drop(tap);
    let (c, k, a) = (cert.display(), key.display(), ca.display());
    let server = Server::start(|p| {
        format!(
            "{{\n workers 1\n}}\n.:{p} {{\n dnstap listen tls://127.0.0.1:{tap_port} full {{\n tls {c} {k} {a}\n }}\n whoami\n}}\n"
        )
    });
    let with_cert = sink_tls(&ca, Some((&client, &client_key)));
    let sink = TestSink::dial(move || tls_dial(tap_port, with_cert.clone()), false);
    until_tapped(server.port, "tls.example.", &[&sink]);
    // Without a client certificate the handshake fails (the listener requires one); the
    // server may report it in the handshake or close the connection on the first read.
    let refused = (|| {
        let mut s = tls_dial(tap_port, sink_tls(&ca, None))?;
        read_control(&mut s).map(|_| ())
    })();
    assert!(
        refused.is_err(),
        "a sink without a client certificate was served"
    );
    assert!(
        server.wait_stdout("peer sent no certificates", Duration::from_secs(5)),
        "{}",
        server.stdout()
    );
    drop(server);
}

/// A reload ends the old listener's streams (STOP, FINISH) and the new configuration
/// listens on the same path once the old one let it go.
#[test]
fn a_reload_ends_the_listeners_streams_and_listens_again_on_the_same_path() {
    let dir = TempDir::new();
    let socket = dir.0.join("reload-listen.sock");
    let sock = socket.display().to_string();
    let corefile = |p: u16, id: &str| {
        format!(
            "{{\n workers 1\n}}\n.:{p} {{\n dnstap listen {sock} full {{\n identity {id}\n }}\n whoami\n}}\n"
        )
    };
    let server = Server::start(|p| corefile(p, "one"));
    let old = TestSink::unix(&socket, false);
    until_tapped(server.port, "first.example.", &[&old]);
    assert!(
        server.reload(&corefile(server.port, "two")),
        "{}",
        server.stdout()
    );
    assert!(old.end(), "the old listener's stream ended with STOP");
    let new = TestSink::unix(&socket, false);
    until_tapped(server.port, "second.example.", &[&new]);
    let got = new.about("second.example.");
    assert!(got.iter().all(|f| f.identity == b"two"), "{got:?}");
    drop(server);
}

/// Asks `name` 6 000 times, one query at a time, and checks that every query is answered
/// and none waited for the dnstap reader: a stuck reader costs frames, never queries.
fn flood_without_waiting(server: &Server, name: &str) {
    let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let mut buf = [0u8; 1500];
    let t0 = Instant::now();
    let mut slowest = Duration::ZERO;
    for id in 0..6_000u16 {
        let q = query(id, name, 1);
        let t = Instant::now();
        s.send_to(&q, server.addr()).unwrap();
        let (n, _) = s.recv_from(&mut buf).expect("every query is answered");
        assert!(n > 12 && buf[..2] == q[..2]);
        slowest = slowest.max(t.elapsed());
    }
    let total = t0.elapsed();
    assert!(
        slowest < Duration::from_millis(500),
        "a query waited {slowest:?}"
    );
    assert!(
        total < Duration::from_secs(20),
        "6 000 queries took {total:?}"
    );
}
