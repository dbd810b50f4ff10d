//! The tsig plugin through the real binary, with real TSIG clients as peers: `dig -y`
//! (bind9-dnsutils) and `kdig -y` (knot-dnsutils) for each of the five algorithms, over
//! UDP and TCP, each verifying the signed reply; a wrong secret (BADSIG) and an unknown key
//! (BADKEY) answered with unsigned NOTAUTH; a stale request this test signs itself (BADTIME,
//! signed, the server's time in Other Data); `require` refusing unsigned queries; a signed
//! AXFR of several messages verified message by message by dig and kdig; and, to show that
//! those checks can fail, a reply whose MAC a proxy of the test corrupts, which both clients
//! reject. The clients are Debian packages (`.ci/apt-packages`): without them a test skips
//! with a message, except in CI, where it fails (`common::peers::tool`).

mod common;

use common::{Server, TempDir, peers, query, udp_exchange};
use hmac::{Hmac, Mac};
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const TEST: &str = "tsig";
/// "secret-key-for-tests", the secret of every key of these tests.
const SECRET_B64: &str = "c2VjcmV0LWtleS1mb3ItdGVzdHM=";
const SECRET: &[u8] = b"secret-key-for-tests";
/// The algorithms, each with a key of its own (`sha1.key.` …); hmac-sha512's comes from a
/// BIND key file (`secrets`).
const ALGS: [&str; 5] = [
    "hmac-sha1",
    "hmac-sha224",
    "hmac-sha256",
    "hmac-sha384",
    "hmac-sha512",
];
/// Enough addresses that an AXFR takes several messages.
const HOSTS: usize = 4000;
/// Addresses of big.example.org.: 16 bytes each, a reply of about 520 bytes without EDNS,
/// just too large for 512 with its TSIG (about 90) even after truncation drops a few.
const BIG: usize = 28;
/// What dig prints when a TSIG does not verify (a reply, or a transfer message).
const DIG_FAILURES: [&str; 4] = [
    "Couldn't verify",
    "could not be validated",
    "tsig verify failure",
    "Transfer failed",
];
/// What kdig prints when a TSIG does not verify.
const KDIG_FAILURES: [&str; 2] = ["failed to verify", "WARNING"];

fn key_name(alg: &str) -> String {
    format!("{}.key.", alg.trim_start_matches("hmac-"))
}

/// The zone example.org. with ns1 and HOSTS addresses.
fn zone() -> String {
    let mut z = String::from(
        "$ORIGIN example.org.\n$TTL 3600\n\
         @ IN SOA ns1 hostmaster 1 7200 1800 1209600 300\n\
         @ IN NS ns1\n\
         ns1 IN A 192.0.2.53\n",
    );
    for i in 0..HOSTS {
        z.push_str(&format!("host{i} IN A 10.0.{}.{}\n", i / 250, i % 250));
    }
    for i in 0..BIG {
        z.push_str(&format!("big IN A 10.1.0.{i}\n"));
    }
    z
}

/// example.org. served from a file, transfers signed and required to be; locked.test.
/// answered by whoami, every query required to be signed.
fn serve(dir: &TempDir) -> Server {
    let db = dir.write("db.example.org", &zone());
    let keys = dir.write(
        "tsig.keys",
        &format!(
            "key \"sha512.key.\" {{\n\talgorithm hmac-sha512;\n\tsecret \"{SECRET_B64}\";\n}};\n"
        ),
    );
    let mut secrets = String::new();
    for alg in &ALGS[..4] {
        secrets.push_str(&format!(
            "    secret {} {SECRET_B64} {alg}\n",
            key_name(alg)
        ));
    }
    Server::start(|p| {
        format!(
            "example.org:{p} {{\n  tsig {{\n{secrets}    secrets {}\n    require AXFR IXFR\n  }}\n  \
             transfer {{\n    to *\n  }}\n  file {}\n}}\n\
             locked.test:{p} {{\n  tsig {{\n    secret sha256.key. {SECRET_B64}\n    require all\n  }}\n  whoami\n}}\n",
            keys.display(),
            db.display()
        )
    })
}

/// The clients, or `None` (skipped) where they are not installed outside CI.
fn clients() -> Option<(PathBuf, PathBuf)> {
    let dig = peers::tool("dig", "bind9-dnsutils", TEST)?;
    let kdig = peers::tool("kdig", "knot-dnsutils", TEST)?;
    Some((dig, kdig))
}

/// Runs a client (whose own timeouts bound it); its stdout and stderr.
fn run(program: &Path, args: &[String]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// dig's arguments for `name TYPE` at `port`, signed with `key` when given.
fn dig_args(port: u16, key: Option<&str>, name: &str, qtype: &str, tcp: bool) -> Vec<String> {
    let mut a: Vec<String> = ["@127.0.0.1", "-p", &port.to_string(), "+tries=1", "+time=3"]
        .map(String::from)
        .to_vec();
    if let Some(k) = key {
        a.extend(["-y".to_string(), k.to_string()]);
    }
    if tcp {
        a.push("+tcp".into());
    }
    a.extend([name.to_string(), qtype.to_string()]);
    a
}

/// kdig's arguments, as [`dig_args`].
fn kdig_args(port: u16, key: Option<&str>, name: &str, qtype: &str, tcp: bool) -> Vec<String> {
    let mut a: Vec<String> = ["@127.0.0.1", "-p", &port.to_string(), "+retry=0", "+time=3"]
        .map(String::from)
        .to_vec();
    if let Some(k) = key {
        a.extend(["-y".to_string(), k.to_string()]);
    }
    if tcp {
        a.push("+tcp".into());
    }
    a.extend([name.to_string(), qtype.to_string()]);
    a
}

fn key_arg(alg: &str, secret_b64: &str) -> String {
    format!("{alg}:{}:{secret_b64}", key_name(alg))
}

fn no_failure(out: &str, failures: &[&str], what: &str) {
    for f in failures {
        assert!(!out.contains(f), "{what}: `{f}` in\n{out}");
    }
}

/// The TSIG pseudosection line of a client's output.
fn tsig_lines(out: &str) -> Vec<&str> {
    out.lines().filter(|l| l.contains("\tTSIG\t")).collect()
}

#[test]
fn dig_and_kdig_verify_the_signed_replies_of_every_algorithm_over_udp_and_tcp() {
    let Some((dig, kdig)) = clients() else { return };
    let dir = TempDir::new();
    let s = serve(&dir);
    for alg in ALGS {
        let key = key_arg(alg, SECRET_B64);
        for tcp in [false, true] {
            let what = format!("dig {alg} tcp={tcp}");
            let out = run(
                &dig,
                &dig_args(s.port, Some(&key), "ns1.example.org", "A", tcp),
            );
            assert!(out.contains("status: NOERROR"), "{what}:\n{out}");
            assert!(out.contains("192.0.2.53"), "{what}:\n{out}");
            let t = tsig_lines(&out);
            assert_eq!(t.len(), 1, "{what}: one TSIG:\n{out}");
            assert!(
                t[0].contains(&format!("{alg}.")) && t[0].contains("NOERROR"),
                "{what}: {t:?}"
            );
            no_failure(&out, &DIG_FAILURES, &what);

            let what = format!("kdig {alg} tcp={tcp}");
            let out = run(
                &kdig,
                &kdig_args(s.port, Some(&key), "ns1.example.org", "A", tcp),
            );
            assert!(out.contains("status: NOERROR"), "{what}:\n{out}");
            assert!(out.contains("192.0.2.53"), "{what}:\n{out}");
            assert_eq!(tsig_lines(&out).len(), 1, "{what}: one TSIG:\n{out}");
            no_failure(&out, &KDIG_FAILURES, &what);
        }
    }
}

#[test]
fn a_wrong_secret_is_badsig_and_an_unknown_key_badkey_both_unsigned_notauth() {
    let Some((dig, kdig)) = clients() else { return };
    let dir = TempDir::new();
    let s = serve(&dir);
    let wrong = key_arg("hmac-sha256", "b3RoZXItc2VjcmV0");
    let unknown = format!("hmac-sha256:nobody.key.:{SECRET_B64}");
    // sha1.key. exists, but as an hmac-sha1 key: another algorithm is an unknown key.
    let other_alg = format!("hmac-sha256:sha1.key.:{SECRET_B64}");
    for (key, error) in [
        (&wrong, "BADSIG"),
        (&unknown, "BADKEY"),
        (&other_alg, "BADKEY"),
    ] {
        let out = run(
            &dig,
            &dig_args(s.port, Some(key), "ns1.example.org", "A", false),
        );
        let t = tsig_lines(&out);
        assert_eq!(t.len(), 1, "{key}:\n{out}");
        // MAC size 0 (unsigned, RFC 8945 §5.3.2), then the error.
        assert!(t[0].contains(" 300 0 "), "{key}: unsigned: {t:?}");
        assert!(t[0].contains(error), "{key}: {error}: {t:?}");
        assert!(!out.contains("192.0.2.53"), "{key}: no answer:\n{out}");
        let out = run(
            &kdig,
            &kdig_args(s.port, Some(key), "ns1.example.org", "A", true),
        );
        assert!(
            out.contains(&format!("status: {error}")),
            "kdig {key}:\n{out}"
        );
    }
    // The raw reply: NOTAUTH (9) in the header.
    let mut q = query(0x77, "ns1.example.org.", 1);
    sign(&mut q, "sha256.key.", b"other-secret", now(), 32);
    let r = udp_exchange(s.port, &q, Duration::from_secs(2)).expect("a reply");
    assert_eq!(r[3] & 0x0F, 9, "NOTAUTH");
    let t = Tsig::of(&r, "sha256.key.", "hmac-sha256");
    assert_eq!((t.mac.len(), t.error, t.other.len()), (0, 16, 0));
}

#[test]
fn a_stale_request_is_badtime_signed_with_the_server_time_in_other_data() {
    let dir = TempDir::new();
    let s = serve(&dir);
    let stale = now() - 3600;
    let mut q = query(0x99, "ns1.example.org.", 1);
    let req_mac = sign(&mut q, "sha256.key.", SECRET, stale, 32);
    let r = udp_exchange(s.port, &q, Duration::from_secs(2)).expect("a reply");
    assert_eq!(r[3] & 0x0F, 9, "NOTAUTH");
    assert_eq!(u16::from_be_bytes([r[6], r[7]]), 0, "no answer");
    let t = Tsig::of(&r, "sha256.key.", "hmac-sha256");
    assert_eq!(t.error, 18, "BADTIME");
    assert_eq!(t.time, stale, "the request's Time Signed (RFC 8945 §5.2.3)");
    assert_eq!(t.other.len(), 6);
    let server = t.other.iter().fold(0u64, |a, b| (a << 8) | u64::from(*b));
    assert!(server.abs_diff(now()) < 10, "the server's time: {server}");
    assert_eq!(t.mac.len(), 32, "signed");
    assert!(
        t.verifies(&r, &req_mac, SECRET),
        "signed with the request's key"
    );
    // Inside the fudge (300 s) the same request is answered.
    let mut q = query(0x9a, "ns1.example.org.", 1);
    let req_mac = sign(&mut q, "sha256.key.", SECRET, now() - 250, 32);
    let r = udp_exchange(s.port, &q, Duration::from_secs(2)).expect("a reply");
    assert_eq!(r[3] & 0x0F, 0, "NOERROR");
    let t = Tsig::of(&r, "sha256.key.", "hmac-sha256");
    assert!(t.verifies(&r, &req_mac, SECRET));
}

#[test]
fn require_refuses_unsigned_queries_of_its_types_and_answers_signed_ones() {
    let Some((dig, _)) = clients() else { return };
    let dir = TempDir::new();
    let s = serve(&dir);
    let key = key_arg("hmac-sha256", SECRET_B64);
    // locked.test: require all.
    let out = run(&dig, &dig_args(s.port, None, "locked.test", "A", false));
    assert!(out.contains("status: REFUSED"), "unsigned:\n{out}");
    let out = run(
        &dig,
        &dig_args(s.port, Some(&key), "locked.test", "A", false),
    );
    assert!(out.contains("status: NOERROR"), "signed:\n{out}");
    assert!(out.contains("127.0.0.1"), "whoami's answer:\n{out}");
    no_failure(&out, &DIG_FAILURES, "signed locked.test");
    // Its key names no algorithm: any of the five is taken, as CoreDNS takes it.
    let sha384 = format!("hmac-sha384:sha256.key.:{SECRET_B64}");
    let out = run(
        &dig,
        &dig_args(s.port, Some(&sha384), "locked.test", "A", true),
    );
    assert!(out.contains("status: NOERROR"), "hmac-sha384:\n{out}");
    assert!(tsig_lines(&out)[0].contains("hmac-sha384."), "{out}");
    no_failure(&out, &DIG_FAILURES, "hmac-sha384 locked.test");
    // example.org: require AXFR IXFR only.
    let out = run(&dig, &dig_args(s.port, None, "ns1.example.org", "A", false));
    assert!(
        out.contains("status: NOERROR") && tsig_lines(&out).is_empty(),
        "{out}"
    );
    let out = run(&dig, &dig_args(s.port, None, "example.org", "AXFR", false));
    assert!(out.contains("Transfer failed"), "unsigned AXFR:\n{out}");
    let r = common::tcp_exchange(s.port, &[query(5, "example.org.", 252)]);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0][3] & 0x0F, 5, "REFUSED");
}

#[test]
fn a_signed_axfr_of_several_messages_verifies_in_dig_and_kdig() {
    let Some((dig, kdig)) = clients() else { return };
    let dir = TempDir::new();
    let s = serve(&dir);
    for alg in ["hmac-sha256", "hmac-sha1"] {
        let key = key_arg(alg, SECRET_B64);
        let out = run(
            &dig,
            &dig_args(s.port, Some(&key), "example.org", "AXFR", false),
        );
        no_failure(&out, &DIG_FAILURES, &format!("dig AXFR {alg}"));
        let size = out
            .lines()
            .find(|l| l.contains("XFR size:"))
            .unwrap_or_else(|| panic!("dig AXFR {alg}:\n{out}"));
        // SOA, NS, ns1, the hosts, SOA.
        let want = format!("XFR size: {} records (messages ", HOSTS + 4 + BIG);
        assert!(size.contains(&want), "{size}");
        let messages: usize = size[size.find("messages ").unwrap() + 9..]
            .split(',')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(messages >= 2, "{size}");
        assert_eq!(tsig_lines(&out).len(), messages, "every message signed");

        let out = run(
            &kdig,
            &kdig_args(s.port, Some(&key), "example.org", "AXFR", false),
        );
        no_failure(&out, &KDIG_FAILURES, &format!("kdig AXFR {alg}"));
        let want = format!("messages, {} records)", HOSTS + 4 + BIG);
        assert!(out.contains(&want), "kdig AXFR {alg}:\n{out}");
        assert_eq!(
            tsig_lines(&out).len(),
            messages,
            "kdig: every message signed"
        );
    }
    // An IXFR from the current serial: the SOA alone, signed.
    let key = key_arg("hmac-sha384", SECRET_B64);
    let out = run(
        &dig,
        &dig_args(s.port, Some(&key), "example.org", "IXFR=1", false),
    );
    no_failure(&out, &DIG_FAILURES, "dig IXFR");
    assert_eq!(tsig_lines(&out).len(), 1, "{out}");
    assert!(out.contains("XFR size: 1 records"), "{out}");
}

/// A UDP proxy in front of the server that flips one bit of every reply's MAC (the 13th
/// byte from the end: inside the MAC, before Original ID, Error and Other Len), for
/// `replies` replies; its port.
fn corrupting_proxy(server: u16, replies: usize) -> u16 {
    let front = UdpSocket::bind("127.0.0.1:0").unwrap();
    front
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let port = front.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let back = UdpSocket::bind("127.0.0.1:0").unwrap();
        back.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buf = [0u8; 4096];
        for _ in 0..replies {
            let Ok((n, client)) = front.recv_from(&mut buf) else {
                return;
            };
            back.send_to(&buf[..n], ("127.0.0.1", server)).unwrap();
            let Ok(n) = back.recv(&mut buf) else { return };
            buf[n - 13] ^= 1;
            let _ = front.send_to(&buf[..n], client);
        }
    });
    port
}

#[test]
fn dig_and_kdig_reject_a_reply_whose_mac_was_corrupted() {
    let Some((dig, kdig)) = clients() else { return };
    let dir = TempDir::new();
    let s = serve(&dir);
    let key = key_arg("hmac-sha256", SECRET_B64);
    let proxy = corrupting_proxy(s.port, 2);
    let out = run(
        &dig,
        &dig_args(proxy, Some(&key), "ns1.example.org", "A", false),
    );
    assert!(out.contains("Couldn't verify signature"), "dig:\n{out}");
    let out = run(
        &kdig,
        &kdig_args(proxy, Some(&key), "ns1.example.org", "A", false),
    );
    assert!(out.contains("failed to verify TSIG"), "kdig:\n{out}");
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn wire(name: &str) -> Vec<u8> {
    common::wire_name(name)
}

fn hmac_sha256(secret: &[u8], parts: &[&[u8]]) -> Vec<u8> {
    let mut m = <Hmac<sha2::Sha256> as Mac>::new_from_slice(secret).unwrap();
    for p in parts {
        m.update(p);
    }
    m.finalize().into_bytes().to_vec()
}

/// Signs `msg` with hmac-sha256 as a client does (RFC 8945 §4.3.1: the message, then the
/// TSIG variables), at `time`, the MAC cut to `mac_len`; the MAC sent.
fn sign(msg: &mut Vec<u8>, key: &str, secret: &[u8], time: u64, mac_len: usize) -> Vec<u8> {
    let key = wire(key);
    let alg = wire("hmac-sha256.");
    let mut vars = key.clone();
    vars.extend_from_slice(&[0, 255, 0, 0, 0, 0]);
    vars.extend_from_slice(&alg);
    vars.extend_from_slice(&time.to_be_bytes()[2..]);
    vars.extend_from_slice(&300u16.to_be_bytes());
    vars.extend_from_slice(&[0, 0, 0, 0]);
    let mac = hmac_sha256(secret, &[msg, &vars])[..mac_len].to_vec();
    let id = [msg[0], msg[1]];
    msg.extend_from_slice(&key);
    msg.extend_from_slice(&[0, 250, 0, 255, 0, 0, 0, 0]);
    msg.extend_from_slice(&((alg.len() + 16 + mac_len) as u16).to_be_bytes());
    msg.extend_from_slice(&alg);
    msg.extend_from_slice(&time.to_be_bytes()[2..]);
    msg.extend_from_slice(&300u16.to_be_bytes());
    msg.extend_from_slice(&(mac_len as u16).to_be_bytes());
    msg.extend_from_slice(&mac);
    msg.extend_from_slice(&id);
    msg.extend_from_slice(&[0, 0, 0, 0]);
    msg[11] += 1;
    mac
}

/// A reply's TSIG, the last record, whose owner and algorithm the test knows.
struct Tsig {
    start: usize,
    key: Vec<u8>,
    alg: Vec<u8>,
    time: u64,
    fudge: u16,
    mac: Vec<u8>,
    orig_id: u16,
    error: u16,
    other: Vec<u8>,
}

impl Tsig {
    /// Reads the TSIG at the end of `r` from the back: Other Data is 0 or 6 bytes.
    fn of(r: &[u8], key: &str, alg: &str) -> Tsig {
        let key = wire(key);
        let alg = wire(&format!("{alg}."));
        for other_len in [0usize, 6] {
            for mac_len in [0usize, 32] {
                let len = key.len() + 10 + alg.len() + 16 + mac_len + other_len;
                let Some(start) = r.len().checked_sub(len) else {
                    continue;
                };
                if r[start..start + key.len()] != key[..] {
                    continue;
                }
                let mut o = start + key.len();
                assert_eq!(&r[o..o + 2], &[0, 250], "type TSIG");
                o += 10;
                assert_eq!(&r[o..o + alg.len()], &alg[..]);
                o += alg.len();
                let time = r[o..o + 6]
                    .iter()
                    .fold(0u64, |a, b| (a << 8) | u64::from(*b));
                let fudge = u16::from_be_bytes([r[o + 6], r[o + 7]]);
                let size = usize::from(u16::from_be_bytes([r[o + 8], r[o + 9]]));
                if size != mac_len {
                    continue;
                }
                o += 10;
                let mac = r[o..o + mac_len].to_vec();
                o += mac_len;
                let orig_id = u16::from_be_bytes([r[o], r[o + 1]]);
                let error = u16::from_be_bytes([r[o + 2], r[o + 3]]);
                let ol = usize::from(u16::from_be_bytes([r[o + 4], r[o + 5]]));
                if ol != other_len {
                    continue;
                }
                let other = r[o + 6..o + 6 + ol].to_vec();
                return Tsig {
                    start,
                    key,
                    alg,
                    time,
                    fudge,
                    mac,
                    orig_id,
                    error,
                    other,
                };
            }
        }
        panic!("no TSIG at the end of the reply {r:02x?}");
    }

    /// Whether the reply's MAC is hmac-sha256 over the request MAC, the reply without its
    /// TSIG (Original ID, one additional record fewer) and the TSIG variables.
    fn verifies(&self, r: &[u8], request_mac: &[u8], secret: &[u8]) -> bool {
        let mut body = r[..self.start].to_vec();
        body[..2].copy_from_slice(&self.orig_id.to_be_bytes());
        let ar = u16::from_be_bytes([body[10], body[11]]) - 1;
        body[10..12].copy_from_slice(&ar.to_be_bytes());
        let mut vars = self.key.clone();
        vars.extend_from_slice(&[0, 255, 0, 0, 0, 0]);
        vars.extend_from_slice(&self.alg);
        vars.extend_from_slice(&self.time.to_be_bytes()[2..]);
        vars.extend_from_slice(&self.fudge.to_be_bytes());
        vars.extend_from_slice(&self.error.to_be_bytes());
        vars.extend_from_slice(&(self.other.len() as u16).to_be_bytes());
        vars.extend_from_slice(&self.other);
        let size = (request_mac.len() as u16).to_be_bytes();
        hmac_sha256(secret, &[&size, request_mac, &body, &vars]) == self.mac
    }
}

/// bufsize and loadbalance, outer to tsig in plugin.cfg's order, leave signed messages
/// alone (an edited query or a reordered reply would fail its MAC): in a block with both,
/// dig's signed query is answered with a reply that verifies, all records there.
#[test]
fn bufsize_and_loadbalance_beside_tsig_leave_signed_messages_alone() {
    let Some((dig, kdig)) = clients() else { return };
    let dir = TempDir::new();
    let db = dir.write("db.example.org", &zone());
    let s = Server::start(|p| {
        format!(
            "example.org:{p} {{\n  bufsize 1100\n  loadbalance\n  tsig {{\n    secret {} {SECRET_B64}\n  }}\n  file {}\n}}\n",
            key_name("hmac-sha256"),
            db.display()
        )
    });
    let key = key_arg("hmac-sha256", SECRET_B64);
    for tcp in [false, true] {
        let out = run(
            &dig,
            &dig_args(s.port, Some(&key), "big.example.org", "A", tcp),
        );
        assert!(out.contains("status: NOERROR"), "{out}");
        assert_eq!(tsig_lines(&out).len(), 1, "signed:\n{out}");
        no_failure(&out, &DIG_FAILURES, "dig beside bufsize and loadbalance");
        // kdig asks without EDNS: a name whose answer fits in 512 bytes.
        let out = run(
            &kdig,
            &kdig_args(s.port, Some(&key), "ns1.example.org", "A", tcp),
        );
        assert!(out.contains("status: NOERROR"), "{out}");
        no_failure(&out, &KDIG_FAILURES, "kdig beside bufsize and loadbalance");
    }
    // Unsigned queries still get both plugins' work: the EDNS size cut to 1100.
    let out = run(&dig, &dig_args(s.port, None, "ns1.example.org", "A", false));
    assert!(out.contains("udp: 1100"), "{out}");
}

#[test]
fn a_signed_reply_too_large_for_udp_is_the_question_with_tc_and_dig_gets_it_over_tcp() {
    let Some((dig, _)) = clients() else { return };
    let dir = TempDir::new();
    let s = serve(&dir);
    let key = key_arg("hmac-sha256", SECRET_B64);
    let mut args = dig_args(s.port, Some(&key), "big.example.org", "A", false);
    args.extend(["+noedns".into(), "+ignore".into()]);
    let out = run(&dig, &args);
    assert!(out.contains("flags: qr aa tc"), "TC:\n{out}");
    assert!(out.contains("ANSWER: 0"), "the question alone:\n{out}");
    assert_eq!(tsig_lines(&out).len(), 1, "signed:\n{out}");
    no_failure(&out, &DIG_FAILURES, "the TC reply");
    // Without +ignore dig retries over TCP, where the whole answer fits, signed.
    args.pop();
    let out = run(&dig, &args);
    assert!(out.contains("Truncated, retrying in TCP mode"), "{out}");
    assert!(out.contains(&format!("ANSWER: {BIG}")), "{out}");
    no_failure(&out, &DIG_FAILURES, "the TCP retry");
}
