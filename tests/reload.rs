//! Reloading the Corefile with the real binary: SIGUSR1 and the `reload` plugin's timer, good
//! and bad Corefiles, listeners and HTTP endpoints that stay, move or go, and a steady query
//! stream over UDP and TCP that must lose nothing across reloads.

mod common;

use common::{Server, free_port, query, rcode, tcp_exchange, udp_exchange};
use std::io::{Read, Write};
use std::net::{TcpStream, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const NOERROR: u8 = 0;
const REFUSED: u8 = 5;

/// Replaces the server's Corefile in one step (write aside, rename), so that a reload never
/// reads half a file.
fn rewrite(s: &Server, text: &str) {
    let tmp = s.dir.write("Corefile.next", text);
    std::fs::rename(tmp, s.dir.0.join("Corefile")).unwrap();
}

fn count(s: &Server, needle: &str) -> usize {
    s.stdout().matches(needle).count()
}

/// Waits until `needle` occurs at least `n` times in stdout.
fn wait_count(s: &Server, needle: &str, n: usize, limit: Duration) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if count(s, needle) >= n {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Applied,
    Unchanged,
    Failed,
}

const APPLIED: &str = "[INFO] Reloading complete";
const UNCHANGED: &str = "nothing to reload";
const FAILED: &str = "[ERROR] SIGUSR1: ";

/// Writes `text` as the Corefile, sends SIGUSR1 and waits for the reload's verdict.
fn reload(s: &Server, text: &str) -> Outcome {
    let before = [count(s, APPLIED), count(s, UNCHANGED), count(s, FAILED)];
    rewrite(s, text);
    s.signal("USR1");
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(10) {
        let now = [count(s, APPLIED), count(s, UNCHANGED), count(s, FAILED)];
        if now[0] > before[0] {
            return Outcome::Applied;
        }
        if now[1] > before[1] {
            return Outcome::Unchanged;
        }
        if now[2] > before[2] {
            return Outcome::Failed;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("no verdict on the reload within 10s:\n{}", s.stdout());
}

/// The rcode of a UDP query for `name`, `None` without an answer in 2s.
fn udp_rcode(port: u16, name: &str) -> Option<u8> {
    udp_exchange(port, &query(7, name, 1), Duration::from_secs(2)).map(|r| rcode(&r))
}

/// The rcode of a TCP query for `name` on a new connection, `None` when it fails.
fn tcp_rcode(port: u16, name: &str) -> Option<u8> {
    if TcpStream::connect(("127.0.0.1", port)).is_err() {
        return None;
    }
    tcp_exchange(port, &[query(8, name, 1)])
        .first()
        .map(|r| rcode(r))
}

/// The status code of a GET on loopback, `None` when nothing answers.
fn http_status(port: u16, path: &str) -> Option<u16> {
    common::http_get(port, path).map(|(code, _)| code)
}

/// The 128 hex digits after the last `Running configuration SHA512 = `.
fn last_hash(s: &Server) -> String {
    let out = s.stdout();
    let at = out
        .rfind("Running configuration SHA512 = ")
        .expect("a configuration hash is logged");
    let hex: String = out[at + 31..]
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    assert_eq!(hex.len(), 128, "a SHA-512 in hex: {hex}");
    hex
}

#[test]
fn sigusr1_switches_answers_over_udp_and_tcp_and_logs_the_new_hash() {
    let s = Server::start(|p| format!("example.org:{p} {{\n    whoami\n}}\n"));
    let p = s.port;
    assert_eq!(udp_rcode(p, "a.example.org."), Some(NOERROR));
    assert_eq!(udp_rcode(p, "a.example.net."), Some(REFUSED));
    // Without the reload directive, the start logs no hash (as CoreDNS).
    assert_eq!(count(&s, "Running configuration SHA512"), 0);

    let next = format!("example.net:{p} {{\n    whoami\n}}\n");
    assert_eq!(reload(&s, &next), Outcome::Applied, "{}", s.stdout());
    assert_eq!(udp_rcode(p, "a.example.org."), Some(REFUSED));
    assert_eq!(udp_rcode(p, "a.example.net."), Some(NOERROR));
    assert_eq!(tcp_rcode(p, "a.example.org."), Some(REFUSED));
    assert_eq!(tcp_rcode(p, "a.example.net."), Some(NOERROR));
    let out = s.stdout();
    let signal = out.find("[INFO] SIGUSR1: Reloading").expect(&out);
    let reloading = out.find("[INFO] Reloading\n").expect(&out);
    let hash = out
        .find("[INFO] plugin/reload: Running configuration SHA512 = ")
        .expect(&out);
    let done = out.find(APPLIED).expect(&out);
    assert!(
        signal < reloading && reloading < hash && hash < done,
        "{out}"
    );
    let first = last_hash(&s);

    // Another change gives another hash; going back gives the first one again.
    let third = format!("example.com:{p} {{\n    whoami\n}}\n");
    assert_eq!(reload(&s, &third), Outcome::Applied);
    assert_eq!(udp_rcode(p, "a.example.com."), Some(NOERROR));
    assert_ne!(last_hash(&s), first);
    assert_eq!(reload(&s, &next), Outcome::Applied);
    assert_eq!(last_hash(&s), first);
}

#[test]
fn comments_and_whitespace_are_not_a_change() {
    let text = |p: u16| format!("example.org:{p} {{\n    whoami\n    log\n}}\n");
    let s = Server::start(text);
    let p = s.port;
    let same = format!(
        "# the same configuration, differently written\n\nexample.org:{p}   {{   # zone\n\n\twhoami\n        log # every query\n}}\n\n# end\n"
    );
    assert_eq!(reload(&s, &same), Outcome::Unchanged, "{}", s.stdout());
    assert!(
        s.stdout()
            .contains("SIGUSR1: Corefile unchanged (SHA512 = ")
    );
    assert_eq!(count(&s, "[INFO] Reloading\n"), 0, "nothing rebuilt");
    assert_eq!(udp_rcode(p, "a.example.org."), Some(NOERROR));
    // One argument on the wrong line is a change (and here an error).
    let moved = format!("example.org:{p} {{\n    whoami log\n}}\n");
    assert_eq!(reload(&s, &moved), Outcome::Failed, "{}", s.stdout());
    // A real change is one.
    let changed = format!("example.org:{p} {{\n    whoami\n}}\n");
    assert_eq!(reload(&s, &changed), Outcome::Applied, "{}", s.stdout());
}

#[test]
fn a_change_in_an_imported_file_is_a_change() {
    let s = Server::start(|p| format!(".:{p} {{\n    whoami\n}}\n"));
    let p = s.port;
    // The same directives through an import: the same configuration.
    s.dir.write("plugins.conf", "whoami\n");
    let text = format!(".:{p} {{\n    import plugins.conf\n}}\n");
    assert_eq!(reload(&s, &text), Outcome::Unchanged, "{}", s.stdout());
    let reply = udp_exchange(p, &query(1, "a.test.", 1), Duration::from_secs(2)).unwrap();
    assert_eq!(
        u16::from_be_bytes([reply[6], reply[7]]),
        0,
        "whoami: no answer record"
    );
    // The Corefile itself stays; only the imported file changes.
    s.dir.write("plugins.conf", "erratic {\n    drop 0\n}\n");
    assert_eq!(reload(&s, &text), Outcome::Applied, "{}", s.stdout());
    let reply = udp_exchange(p, &query(2, "a.test.", 1), Duration::from_secs(2)).unwrap();
    assert_eq!(
        u16::from_be_bytes([reply[6], reply[7]]),
        1,
        "erratic: one A record"
    );
    assert_eq!(reload(&s, &text), Outcome::Unchanged);
}

#[test]
fn a_bad_corefile_keeps_the_running_configuration_and_says_why() {
    let s = Server::start(|p| format!("example.org:{p} {{\n    whoami\n}}\n"));
    let p = s.port;
    // A port something else holds (without SO_REUSEPORT) cannot be bound. Bound on port 0
    // at once: a port from free_port() could become another test's ephemeral client port
    // between its release and this bind (CI saw AddrInUse here).
    let _taken = UdpSocket::bind(("127.0.0.1", 0)).unwrap();
    let t = _taken.local_addr().unwrap().port();
    let bad = [
        (
            format!("example.net:{p} {{\n    whoami\n"),
            "Syntax error: Unexpected token 'whoami', expecting '}'".to_string(),
        ),
        (
            format!("example.net:{p} {{\n    whoami\n    bogus\n}}\n"),
            "Corefile:3 - Error during parsing: Unknown directive 'bogus'".to_string(),
        ),
        (
            format!("example.net:{p} {{\n    reload 1s\n    whoami\n}}\n"),
            "plugin/reload: interval value must be greater or equal to 2s".to_string(),
        ),
        (
            format!(
                "example.net:{p} {{\n    whoami\n}}\n.:{t} {{\n    bind 127.0.0.1\n    whoami\n}}\n"
            ),
            format!("listen 127.0.0.1:{t}: "),
        ),
    ];
    for (i, (text, why)) in bad.iter().enumerate() {
        assert_eq!(reload(&s, text), Outcome::Failed, "{text}\n{}", s.stdout());
        let out = s.stdout();
        let restart = out
            .lines()
            .filter(|l| l.starts_with("[ERROR] Restart failed: "))
            .nth(i)
            .unwrap_or_else(|| panic!("{out}"));
        assert!(restart.contains(why.as_str()), "{restart} lacks {why}");
        assert!(
            out.lines()
                .any(|l| l.starts_with("[ERROR] SIGUSR1: ") && l.contains(why.as_str())),
            "{out}"
        );
        // The old configuration still serves, over both transports.
        assert_eq!(udp_rcode(p, "a.example.org."), Some(NOERROR), "{text}");
        assert_eq!(udp_rcode(p, "a.example.net."), Some(REFUSED), "{text}");
        assert_eq!(tcp_rcode(p, "a.example.org."), Some(NOERROR), "{text}");
    }
    // The half-opened sockets of the failed reload were closed again: the server holds no
    // socket on the port. (Asked of the server's own fds, not by binding the port: once
    // `_taken` is gone, any other test's client may get it as its ephemeral port.)
    drop(_taken);
    assert!(
        holds_udp_port(s.pid(), p),
        "the check sees the port the server does hold"
    );
    assert!(
        !holds_udp_port(s.pid(), t),
        "port {t} left bound by the server"
    );
    // And a good Corefile still applies after the bad ones.
    assert_eq!(
        reload(&s, &format!("example.net:{p} {{\n    whoami\n}}\n")),
        Outcome::Applied
    );
    assert_eq!(udp_rcode(p, "a.example.net."), Some(NOERROR));
}

#[test]
fn the_reload_directive_picks_up_changes_by_itself() {
    let text = |zone: &str, p: u16| format!("{zone}:{p} {{\n    reload 2s 1s\n    whoami\n}}\n");
    let s = Server::start(|p| text("example.org", p));
    let p = s.port;
    // The directive logs the running hash at start.
    // A bound, not a measurement: under the full suite's load the first line took > 2 s once.
    assert!(s.wait_stdout(
        "[INFO] plugin/reload: Running configuration SHA512 = ",
        Duration::from_secs(10)
    ));
    let first = last_hash(&s);
    rewrite(&s, &text("example.net", p));
    let t0 = Instant::now();
    while udp_rcode(p, "a.example.net.") != Some(NOERROR) {
        assert!(
            t0.elapsed() < Duration::from_secs(8),
            "not reloaded:\n{}",
            s.stdout()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // One core answering from the new configuration does not mean all of them do yet: the
    // reload is complete once every core took it.
    assert!(wait_count(&s, APPLIED, 1, Duration::from_secs(2)));
    assert_eq!(count(&s, "did not take the new configuration"), 0);
    assert_eq!(udp_rcode(p, "a.example.org."), Some(REFUSED));
    assert_ne!(last_hash(&s), first);
    assert_eq!(count(&s, "SIGUSR1"), 0, "the timer did it");

    // A bad Corefile: reported once (not at every look), the running one keeps serving.
    rewrite(
        &s,
        &format!("example.com:{p} {{\n    reload 2s 1s\n    bogus\n}}\n"),
    );
    const TIMER_FAILED: &str = "[ERROR] plugin/reload: Corefile changed but reload failed: ";
    assert!(
        wait_count(&s, TIMER_FAILED, 1, Duration::from_secs(8)),
        "{}",
        s.stdout()
    );
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(count(&s, TIMER_FAILED), 1, "{}", s.stdout());
    assert_eq!(udp_rcode(p, "a.example.net."), Some(NOERROR));

    // Without the directive the timer stops: a later change waits for SIGUSR1.
    rewrite(&s, &format!("example.com:{p} {{\n    whoami\n}}\n"));
    assert!(
        wait_count(&s, APPLIED, 2, Duration::from_secs(8)),
        "{}",
        s.stdout()
    );
    assert_eq!(udp_rcode(p, "a.example.com."), Some(NOERROR));
    rewrite(&s, &format!("example.org:{p} {{\n    whoami\n}}\n"));
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(
        udp_rcode(p, "a.example.org."),
        Some(REFUSED),
        "no timer any more"
    );
    assert_eq!(
        reload(&s, &format!("example.org:{p} {{\n    whoami\n}}\n")),
        Outcome::Applied
    );
    assert_eq!(udp_rcode(p, "a.example.org."), Some(NOERROR));
}

/// Polls an HTTP path until told to stop; counts the answers that were not 200.
struct Poller {
    stop: Arc<AtomicBool>,
    bad: Arc<AtomicUsize>,
    polls: Arc<AtomicUsize>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Poller {
    fn start(port: u16, path: &'static str) -> Poller {
        let stop = Arc::new(AtomicBool::new(false));
        let bad = Arc::new(AtomicUsize::new(0));
        let polls = Arc::new(AtomicUsize::new(0));
        let (s, b, n) = (stop.clone(), bad.clone(), polls.clone());
        let handle = std::thread::spawn(move || {
            let t0 = Instant::now();
            while !s.load(Ordering::Relaxed) && t0.elapsed() < Duration::from_secs(60) {
                if http_status(port, path) != Some(200) {
                    b.fetch_add(1, Ordering::Relaxed);
                }
                n.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        Poller {
            stop,
            bad,
            polls,
            handle: Some(handle),
        }
    }

    /// (polls, answers that were not 200).
    fn finish(mut self) -> (usize, usize) {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.take().unwrap().join().unwrap();
        (
            self.polls.load(Ordering::Relaxed),
            self.bad.load(Ordering::Relaxed),
        )
    }
}

#[test]
fn health_and_ready_stay_up_across_reloads_and_a_moved_port_moves() {
    let (hp, rp, mp) = (free_port(), free_port(), free_port());
    let (h, r, m) = (hp.port, rp.port, mp.port);
    let text = |zone: &str, health: u16, p: u16| {
        format!(
            "{zone}:{p} {{\n    health 127.0.0.1:{health}\n    ready 127.0.0.1:{r}\n    whoami\n}}\n"
        )
    };
    let s = Server::start(|p| text("example.org", h, p));
    let p = s.port;
    assert_eq!(http_status(h, "/health"), Some(200));
    assert_eq!(http_status(r, "/ready"), Some(200));
    let health = Poller::start(h, "/health");
    let ready = Poller::start(r, "/ready");
    std::thread::sleep(Duration::from_millis(100));
    // Good, bad, good: the endpoints never close, never answer anything but 200.
    assert_eq!(reload(&s, &text("example.net", h, p)), Outcome::Applied);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        reload(
            &s,
            &text("example.com", h, p).replace("whoami", "whoami\n    bogus")
        ),
        Outcome::Failed
    );
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(reload(&s, &text("example.com", h, p)), Outcome::Applied);
    std::thread::sleep(Duration::from_millis(100));
    let (n, bad) = health.finish();
    assert!(n > 10, "polled {n} times");
    assert_eq!(bad, 0, "/health failed {bad} of {n} polls:\n{}", s.stdout());
    assert_eq!(udp_rcode(p, "a.example.com."), Some(NOERROR));

    // Move health to another port: it opens there and closes here; ready stays.
    assert_eq!(reload(&s, &text("example.com", m, p)), Outcome::Applied);
    assert_eq!(http_status(m, "/health"), Some(200));
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", h)).is_ok() {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "the old health port stays open"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // A health port that cannot be bound fails the reload and closes nothing.
    let blocker = std::net::TcpListener::bind(("127.0.0.1", h)).unwrap();
    assert_eq!(reload(&s, &text("example.org", h, p)), Outcome::Failed);
    assert!(s.stdout().contains(&format!("listen tcp 127.0.0.1:{h}")));
    drop(blocker);
    assert_eq!(http_status(m, "/health"), Some(200));
    assert_eq!(udp_rcode(p, "a.example.com."), Some(NOERROR));
    let (n, bad) = ready.finish();
    assert!(n > 10, "polled {n} times");
    assert_eq!(bad, 0, "/ready failed {bad} of {n} polls:\n{}", s.stdout());
    // Removing ready closes its port.
    let last = format!("example.com:{p} {{\n    health 127.0.0.1:{m}\n    whoami\n}}\n");
    assert_eq!(reload(&s, &last), Outcome::Applied);
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", r)).is_ok() {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "the ready port stays open"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// prometheus's `/metrics` is a plugin-registered endpoint like health's and ready's: its
/// listener stays through good and bad reloads (the new configuration's handler answers on
/// it), it moves when its address does, and it closes when no block registers it.
#[test]
fn a_plugin_registered_metrics_endpoint_survives_reloads_and_moves_with_its_address() {
    let (mp, np) = (free_port(), free_port());
    let (m, n) = (mp.port, np.port);
    let text = |zone: &str, metrics: u16, p: u16| {
        format!("{zone}:{p} {{\n    prometheus 127.0.0.1:{metrics}\n    whoami\n}}\n")
    };
    let s = Server::start(|p| text("example.org", m, p));
    let p = s.port;
    assert_eq!(udp_rcode(p, "a.example.org."), Some(NOERROR));
    let scrapes = Poller::start(m, "/metrics");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(reload(&s, &text("example.net", m, p)), Outcome::Applied);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        reload(
            &s,
            &text("example.com", m, p).replace("whoami", "whoami\n    bogus")
        ),
        Outcome::Failed
    );
    std::thread::sleep(Duration::from_millis(100));
    let (polls, bad) = scrapes.finish();
    assert!(polls > 10, "polled {polls} times");
    assert_eq!(
        bad,
        0,
        "/metrics failed {bad} of {polls} polls:\n{}",
        s.stdout()
    );
    // The kept listener serves the new configuration's families: the new zone is there.
    assert_eq!(udp_rcode(p, "a.example.net."), Some(NOERROR));
    let (_, body) = common::http_get(m, "/metrics").unwrap();
    assert!(
        body.contains("zone=\"example.net.\""),
        "no example.net. series:\n{body}"
    );
    // Moved: it opens on the new port and the old one closes.
    assert_eq!(reload(&s, &text("example.net", n, p)), Outcome::Applied);
    assert_eq!(http_status(n, "/metrics"), Some(200));
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", m)).is_ok() {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "the old metrics port stays open"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // No block registers it any more: it closes.
    let last = format!("example.net:{p} {{\n    whoami\n}}\n");
    assert_eq!(reload(&s, &last), Outcome::Applied);
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", n)).is_ok() {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "the metrics port stays open"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn dns_listeners_open_move_and_close() {
    let s = Server::start(|p| format!(".:{p} {{\n    whoami\n}}\n"));
    let p = s.port;
    let second = free_port();
    let q = second.port;
    assert_eq!(udp_rcode(q, "a.test."), None);
    // A second port opens, over UDP and TCP.
    let two = format!(".:{p} {{\n    whoami\n}}\n.:{q} {{\n    whoami\n}}\n");
    assert_eq!(reload(&s, &two), Outcome::Applied);
    assert_eq!(udp_rcode(q, "a.test."), Some(NOERROR));
    assert_eq!(tcp_rcode(q, "a.test."), Some(NOERROR));
    // The first moves from the wildcard to 127.0.0.1 (another listener on the same port)
    // and the second closes.
    let moved = format!(".:{p} {{\n    bind 127.0.0.1\n    whoami\n}}\n");
    assert_eq!(reload(&s, &moved), Outcome::Applied, "{}", s.stdout());
    assert_eq!(udp_rcode(p, "a.test."), Some(NOERROR));
    assert_eq!(tcp_rcode(p, "a.test."), Some(NOERROR));
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", q)).is_ok() {
        assert!(
            t0.elapsed() < Duration::from_secs(8),
            "port {q} stays open over TCP"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        udp_rcode(q, "a.test."),
        None,
        "port {q} still answers over UDP"
    );
}

#[test]
fn global_block_changes_are_logged_as_needing_a_restart_and_the_rest_reloads() {
    let s = Server::start(|p| {
        format!("{{\n    udp_batch 16\n}}\nexample.org:{p} {{\n    whoami\n}}\n")
    });
    let p = s.port;
    let next =
        format!("{{\n    udp_batch 8\n    workers 1\n}}\nexample.net:{p} {{\n    whoami\n}}\n");
    assert_eq!(reload(&s, &next), Outcome::Applied, "{}", s.stdout());
    assert!(
        s.stdout().contains(
            "[WARNING] Reloading: the global block's workers, udp_batch changed; that takes a restart"
        ),
        "{}",
        s.stdout()
    );
    assert_eq!(udp_rcode(p, "a.example.net."), Some(NOERROR));
}

/// What a query stream saw: queries sent, answers missing, answers by kind.
#[derive(Default, Debug)]
struct Tally {
    sent: usize,
    lost: usize,
    /// Answers with an answer record (erratic) and without (whoami).
    erratic: usize,
    whoami: usize,
}

impl Tally {
    fn answer(&mut self, reply: &[u8]) {
        if rcode(reply) != NOERROR {
            self.lost += 1;
        } else if u16::from_be_bytes([reply[6], reply[7]]) > 0 {
            self.erratic += 1;
        } else {
            self.whoami += 1;
        }
    }
}

/// Whether a stream goes on: until `done`, bounded in queries and time. Streams pause
/// [`STREAM_PACE`] after each answer, so that they outlast the test's reloads however fast
/// the server answers (20 000 back-to-back queries once ended before the first reload).
fn streaming(done: &AtomicBool, t: &Tally, t0: Instant) -> bool {
    !done.load(Ordering::Relaxed) && t.sent < 200_000 && t0.elapsed() < Duration::from_secs(60)
}

/// The pause of a stream between an answer and its next query.
const STREAM_PACE: Duration = Duration::from_micros(100);

/// Sends UDP queries one after the other until `done`; a query without an answer in 3 s is
/// lost (no retry).
fn udp_stream(port: u16, done: Arc<AtomicBool>) -> Tally {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let mut t = Tally::default();
    let mut buf = [0u8; 4096];
    let t0 = Instant::now();
    while streaming(&done, &t, t0) {
        let id = t.sent as u16;
        sock.send_to(&query(id, "stream.example.org.", 1), ("127.0.0.1", port))
            .unwrap();
        t.sent += 1;
        loop {
            match sock.recv_from(&mut buf) {
                Ok((n, _)) if n >= 12 && u16::from_be_bytes([buf[0], buf[1]]) == id => {
                    t.answer(&buf[..n]);
                    std::thread::sleep(STREAM_PACE);
                    break;
                }
                Ok(_) => continue,
                Err(_) => {
                    t.lost += 1;
                    break;
                }
            }
        }
    }
    t
}

/// The same over one TCP connection kept for the whole stream.
fn tcp_stream(port: u16, done: Arc<AtomicBool>) -> Tally {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let mut t = Tally::default();
    let t0 = Instant::now();
    while streaming(&done, &t, t0) {
        let q = query(t.sent as u16, "stream.example.org.", 1);
        let mut frame = (q.len() as u16).to_be_bytes().to_vec();
        frame.extend_from_slice(&q);
        t.sent += 1;
        if s.write_all(&frame).is_err() {
            t.lost += 1;
            break;
        }
        let mut len = [0u8; 2];
        if s.read_exact(&mut len).is_err() {
            t.lost += 1;
            break;
        }
        let mut reply = vec![0u8; usize::from(u16::from_be_bytes(len))];
        if s.read_exact(&mut reply).is_err() {
            t.lost += 1;
            break;
        }
        t.answer(&reply);
        std::thread::sleep(STREAM_PACE);
    }
    t
}

#[test]
fn a_steady_query_stream_over_udp_and_tcp_loses_nothing_across_five_reloads() {
    // whoami answers at once; erratic's delay makes every query wait 30 ms as a task, so
    // reloads land while queries are in flight on the old chain.
    let whoami = |p: u16| format!(".:{p} {{\n    whoami\n}}\n");
    let erratic = |p: u16| format!(".:{p} {{\n    erratic {{\n        delay 1 30ms\n    }}\n}}\n");
    let s = Server::start(whoami);
    let p = s.port;
    let extra = free_port();
    let done = Arc::new(AtomicBool::new(false));
    let mut streams = Vec::new();
    for _ in 0..2 {
        let d = done.clone();
        streams.push(("udp", std::thread::spawn(move || udp_stream(p, d))));
    }
    for _ in 0..2 {
        let d = done.clone();
        streams.push(("tcp", std::thread::spawn(move || tcp_stream(p, d))));
    }
    let with_extra = format!("{}.:{} {{\n    whoami\n}}\n", erratic(p), extra.port);
    let steps = [
        (erratic(p), Outcome::Applied),
        (whoami(p), Outcome::Applied),
        (
            whoami(p).replace("whoami", "whoami\n    bogus"),
            Outcome::Failed,
        ),
        (with_extra, Outcome::Applied),
        (whoami(p), Outcome::Applied),
    ];
    std::thread::sleep(Duration::from_millis(300));
    for (text, expected) in &steps {
        assert_eq!(reload(&s, text), *expected, "{text}\n{}", s.stdout());
        std::thread::sleep(Duration::from_millis(300));
    }
    done.store(true, Ordering::Relaxed);
    for (kind, h) in streams {
        let t = h.join().unwrap();
        assert_eq!(t.lost, 0, "{kind}: {t:?}\n{}", s.stdout());
        assert!(t.sent > 20, "{kind}: {t:?}");
        // Both configurations answered this stream: the reloads happened under it.
        assert!(t.erratic > 0 && t.whoami > 0, "{kind}: {t:?}");
    }
    assert_eq!(count(&s, "[ERROR] Restart failed: "), 1);
}

/// Whether process `pid` has a UDP socket bound to local port `port` (IPv4 or IPv6): the
/// sockets of /proc/net/udp{,6} on that port, matched against the process's fds.
fn holds_udp_port(pid: u32, port: u16) -> bool {
    let hex = format!(":{port:04X}");
    let mut inodes = Vec::new();
    for table in ["/proc/net/udp", "/proc/net/udp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.len() > 9 && cols[1].ends_with(&hex) {
                inodes.push(format!("socket:[{}]", cols[9]));
            }
        }
    }
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path())
            .is_ok_and(|target| inodes.iter().any(|i| target.to_string_lossy() == *i))
    })
}
