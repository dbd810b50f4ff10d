//! The command line, the Corefile lookup order, start-up errors and signals.

mod common;

use common::{
    Server, TempDir, ask, binary, exit_within, free_port, http_get, query, run_expect_failure,
};
use hickory_proto::op::ResponseCode;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn plugins_lists_the_chain_in_plugin_cfg_order() {
    let out = Command::new(binary()).arg("-plugins").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let listed: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("dns."))
        .collect();
    let cfg = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/plugin.cfg")).unwrap();
    let expected: Vec<&str> = cfg
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split(':').next().unwrap())
        .collect();
    assert_eq!(listed, expected);
    assert_eq!(listed.first(), Some(&"root"));
    assert_eq!(listed.last(), Some(&"whoami"));
}

#[test]
fn version_prints_and_exits() {
    for flag in ["-version", "--version"] {
        let out = Command::new(binary()).arg(flag).output().unwrap();
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).starts_with("ringdns-"));
    }
}

#[test]
fn version_names_the_compiler_and_the_commit_built_as_coredns_does() {
    let out = Command::new(binary()).arg("-version").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let second = text.lines().nth(1).unwrap_or_default();
    // CoreDNS: `linux/amd64, go1.20.7, ae2bbc2`.
    let fields: Vec<&str> = second.split(", ").collect();
    assert_eq!(fields.len(), 3, "{text}");
    assert!(fields[0].starts_with("linux/"), "{text}");
    assert!(fields[1].starts_with("rustc 1."), "{text}");
    // Built from this checkout: its commit (when git is there to say which).
    let head = Command::new("git")
        .args([
            "-C",
            env!("CARGO_MANIFEST_DIR"),
            "rev-parse",
            "--short=7",
            "HEAD",
        ])
        .output();
    match head {
        Ok(h) if h.status.success() => {
            let head = String::from_utf8_lossy(&h.stdout).trim().to_string();
            assert!(fields[2].starts_with(&head), "{text} (HEAD is {head})");
        }
        _ => eprintln!("skipped the commit check: no git checkout"),
    }
}

#[test]
fn extra_arguments_are_an_error() {
    let out = Command::new(binary())
        .args(["-conf", "x", "extra"])
        .output()
        .unwrap();
    assert!(!out.status.success());
}

/// Runs the binary in `dir` with `args`, waits for an answer on `port`, then stops it.
fn serve_and_ask(dir: &TempDir, args: &[&str], port: u16, stdin: Option<&str>) -> ResponseCode {
    let mut child = Command::new(binary())
        .args(args)
        .current_dir(&dir.0)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        let mut w = child.stdin.take().unwrap();
        w.write_all(text.as_bytes()).unwrap();
    }
    let t0 = Instant::now();
    let mut rc = None;
    while t0.elapsed() < Duration::from_secs(10) && rc.is_none() {
        if let Some(r) = common::udp_exchange(
            port,
            &query(1, "example.org.", 1),
            Duration::from_millis(100),
        ) {
            rc = Some(
                hickory_proto::op::Message::from_vec(&r)
                    .unwrap()
                    .metadata
                    .response_code,
            );
        }
    }
    common::send_signal(child.id(), "TERM");
    let _ = child.wait();
    rc.expect("the server answered")
}

#[test]
fn without_a_corefile_the_builtin_default_serves_whoami_on_dns_port() {
    let dir = TempDir::new();
    let port = free_port();
    let p = port.port.to_string();
    assert_eq!(
        serve_and_ask(&dir, &["-dns.port", &p], port.port, None),
        ResponseCode::NoError
    );
}

#[test]
fn a_corefile_in_the_working_directory_is_used() {
    let dir = TempDir::new();
    let port = free_port();
    dir.write(
        "Corefile",
        &format!("example.net:{} {{\n whoami\n}}\n", port.port),
    );
    // example.org is not served by ./Corefile: REFUSED proves it was loaded.
    assert_eq!(
        serve_and_ask(&dir, &[], port.port, None),
        ResponseCode::Refused
    );
}

#[test]
fn conf_stdin_reads_the_corefile_from_standard_input() {
    let dir = TempDir::new();
    let port = free_port();
    let text = format!("example.org:{} {{\n whoami\n}}\n", port.port);
    assert_eq!(
        serve_and_ask(&dir, &["-conf", "stdin"], port.port, Some(&text)),
        ResponseCode::NoError
    );
}

#[test]
fn a_corefile_without_server_blocks_falls_back_to_the_default() {
    let dir = TempDir::new();
    let port = free_port();
    let conf = dir.write("Corefile", "# only a comment\n(snip) {\n whoami\n}\n");
    let p = port.port.to_string();
    let c = conf.to_string_lossy().to_string();
    assert_eq!(
        serve_and_ask(&dir, &["-conf", &c, "-p", &p], port.port, None),
        ResponseCode::NoError
    );
}

#[test]
fn snippets_imports_and_env_work_in_a_served_corefile() {
    let s = Server::start(|p| {
        format!(
            "(common) {{\n whoami\n}}\nexample.org:{p} {{\n import common\n}}\n{{$RINGDNS_TEST_UNSET}}x.test:{p} {{\n import common\n}}\n"
        )
    });
    assert_eq!(
        ask(s.port, &query(1, "example.org.", 1))
            .metadata
            .response_code,
        ResponseCode::NoError
    );
    assert_eq!(
        ask(s.port, &query(1, "a.x.test.", 1))
            .metadata
            .response_code,
        ResponseCode::NoError
    );
}

#[test]
fn bad_corefiles_exit_1_with_file_line_and_message() {
    let cases: &[(&str, &str)] = &[
        (
            ".:1053 {\n    whoami\n    bogus\n}\n",
            ":3 - Error during parsing: Unknown directive 'bogus'",
        ),
        (
            ".:1053 {\n    whoami\n",
            ":2 - Syntax error: Unexpected token 'whoami', expecting '}'",
        ),
        (
            ".:1053 {\n  whoami extra\n}\n",
            ":2 - Error during parsing: Wrong argument count or unexpected line ending after 'extra'",
        ),
        (
            "tls://.:853 {\n whoami\n}\n",
            "transport 'tls' is not supported yet",
        ),
        (
            "https://.:443 {\n whoami\n}\n",
            "transport 'https' is not supported yet",
        ),
        (
            ".:1053 {\n whoami\n}\n.:1053 {\n whoami\n}\n",
            "cannot serve dns://.:1053 - it is already defined",
        ),
        (
            ".:1053 {\n import missing.conf\n}\n",
            "File to import not found",
        ),
        (
            "{\n  workerz 2\n}\n.:1053 {\n whoami\n}\n",
            ":2 - Error during parsing: unknown global option 'workerz'",
        ),
        (
            ".:1053 {\n errors\n errors\n}\n",
            "this plugin can only be used once per Server Block",
        ),
        (
            ".:1053 {\n log {\n  class bogus\n }\n}\n",
            ":3 - Error during parsing: invalid Class: bogus",
        ),
        (".:1053 {\n bind 203.0.113.77\n whoami\n}\n", "listen"),
        (".:70000 {\n whoami\n}\n", "invalid port"),
        (
            "a.org:1053 { whoami }\n",
            "Unexpected '}' because no matching opening brace",
        ),
    ];
    for (text, want) in cases {
        let (code, err) = run_expect_failure(text);
        assert_eq!(code, 1, "exit status for:\n{text}\nstderr: {err}");
        assert!(
            err.contains(want),
            "for:\n{text}\nwant {want:?} in stderr: {err}"
        );
        if want.starts_with(':') {
            assert!(err.contains("Corefile:"), "FILE:LINE in {err}");
        }
    }
}

#[test]
fn sigterm_and_sigint_stop_gracefully_and_remove_the_pidfile() {
    for sig in ["TERM", "INT"] {
        let dir = TempDir::new();
        let pidfile = dir.0.join("ringdns.pid");
        let pf = pidfile.to_string_lossy().to_string();
        let mut s =
            Server::start_with_args(|p| format!(".:{p} {{\n whoami\n}}\n"), &["-pidfile", &pf]);
        let written = std::fs::read_to_string(&pidfile).unwrap();
        assert_eq!(written.trim(), s.pid().to_string());
        s.signal(sig);
        assert_eq!(
            s.wait_exit(Duration::from_secs(10)),
            Some(0),
            "exit after SIG{sig}"
        );
        assert!(!pidfile.exists(), "pidfile removed after SIG{sig}");
    }
}

#[test]
fn quiet_hides_the_banner() {
    let s = Server::start_with_args(|p| format!(".:{p} {{\n whoami\n}}\n"), &["-quiet"]);
    std::thread::sleep(Duration::from_millis(100));
    assert!(!s.stdout().contains("ringdns-"), "{}", s.stdout());
}

#[test]
fn a_graceful_stop_answers_the_queries_in_flight() {
    // Every query waits 500 ms in erratic: SIGTERM arrives while they are in flight.
    let mut s = Server::start(|p| {
        format!("{{\n workers 1\n}}\n.:{p} {{\n erratic {{\n  delay 1 500ms\n }}\n}}\n")
    });
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    for i in 0..5u16 {
        sock.send_to(&query(i, "inflight.test.", 1), ("127.0.0.1", s.port))
            .unwrap();
    }
    std::thread::sleep(Duration::from_millis(100));
    s.signal("TERM");
    let mut buf = [0u8; 512];
    let mut answered = 0;
    while answered < 5 {
        match sock.recv_from(&mut buf) {
            Ok(_) => answered += 1,
            Err(_) => break,
        }
    }
    assert_eq!(answered, 5, "queries in flight at SIGTERM are answered");
    assert_eq!(s.wait_exit(Duration::from_secs(10)), Some(0));
}

#[test]
fn the_example_corefile_starts_and_answers() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Corefile.example")).unwrap();
    let s = Server::start(move |p| text.replace("1053", &p.to_string()));
    assert_eq!(
        ask(s.port, &query(1, "www.example.net.", 1))
            .metadata
            .response_code,
        ResponseCode::NoError
    );
    assert_eq!(
        ask(s.port, &query(2, "www.example.org.", 1))
            .metadata
            .response_code,
        ResponseCode::NoError
    );
    assert!(
        s.wait_stdout("www.example.org. NOERROR", Duration::from_secs(3)),
        "{}",
        s.stdout()
    );
}

#[test]
fn health_and_ready_and_a_lameduck_stop() {
    let (hp, rp) = (common::free_port(), common::free_port());
    let (h, r) = (hp.port, rp.port);
    let mut s = Server::start(move |p| {
        format!(
            ".:{p} {{\n health 127.0.0.1:{h} {{\n  lameduck 1s\n }}\n ready 127.0.0.1:{r}\n whoami\n}}\n"
        )
    });
    assert_eq!(http_get(h, "/health"), Some((200, "OK".to_string())));
    // Cores read queries only once /ready says 200: an answered server is ready.
    assert_eq!(http_get(r, "/ready").map(|x| x.0), Some(200));
    assert_eq!(http_get(h, "/other").map(|x| x.0), Some(404));
    let t0 = Instant::now();
    s.signal("TERM");
    // Lameduck: not ready (as soon as the signal is handled; a loaded machine may take a
    // moment), still healthy, still answering.
    while http_get(r, "/ready").map(|x| x.0) != Some(503) {
        assert!(
            t0.elapsed() < Duration::from_millis(900),
            "/ready still 200"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(http_get(h, "/health").map(|x| x.0), Some(200));
    assert_eq!(
        ask(s.port, &query(1, "lameduck.test.", 1))
            .metadata
            .response_code,
        ResponseCode::NoError
    );
    assert_eq!(s.wait_exit(Duration::from_secs(10)), Some(0));
    assert!(
        t0.elapsed() >= Duration::from_secs(1),
        "stopped after the lameduck"
    );
}

#[test]
fn a_taken_health_port_is_a_start_up_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let (code, err) = run_expect_failure(&format!(
        ".:1053 {{\n health 127.0.0.1:{port}\n whoami\n}}\n"
    ));
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!("listen tcp 127.0.0.1:{port}")),
        "{err}"
    );
}

#[test]
fn sighup_is_ignored_and_sigusr2_reloads_while_serving() {
    let mut s = Server::start(|p| format!(".:{p} {{\n whoami\n}}\n"));
    s.signal("HUP");
    assert!(
        s.wait_stdout("[INFO] SIGHUP: ignored", Duration::from_secs(5)),
        "SIGHUP logged\nstdout: {}\nstderr: {}",
        s.stdout(),
        s.stderr()
    );
    assert_eq!(
        ask(s.port, &query(1, "after.hup.", 1))
            .metadata
            .response_code,
        ResponseCode::NoError
    );
    s.signal("USR2");
    assert!(
        s.wait_stdout("[INFO] SIGUSR2: Reloading", Duration::from_secs(5)),
        "SIGUSR2 logged\nstdout: {}\nstderr: {}",
        s.stdout(),
        s.stderr()
    );
    assert_eq!(
        ask(s.port, &query(2, "after.usr2.", 1))
            .metadata
            .response_code,
        ResponseCode::NoError
    );
    assert_eq!(s.stdout().matches("SIGHUP").count(), 1, "{}", s.stdout());
    s.signal("TERM");
    assert_eq!(s.wait_exit(Duration::from_secs(10)), Some(0));
}

#[test]
fn a_corefile_larger_than_the_cap_is_refused_at_once() {
    let cap = "67108864 bytes";
    let (code, err) = exit_within(
        &["-conf", "/dev/zero"],
        Stdio::null(),
        Duration::from_secs(5),
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("Corefile /dev/zero") && err.contains(cap),
        "{err}"
    );

    // A sparse file one byte over the cap.
    let dir = TempDir::new();
    let big = dir.0.join("Corefile.big");
    std::fs::File::create(&big)
        .unwrap()
        .set_len((64 << 20) + 1)
        .unwrap();
    let path = big.to_string_lossy().to_string();
    let (code, err) = exit_within(&["-conf", &path], Stdio::null(), Duration::from_secs(5));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(&path) && err.contains(cap), "{err}");

    let zero = std::fs::File::open("/dev/zero").unwrap();
    let (code, err) = exit_within(&["-conf", "stdin"], zero.into(), Duration::from_secs(5));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("from stdin") && err.contains(cap), "{err}");
}

#[test]
fn bytes_that_are_not_utf8_read_as_in_coredns() {
    // Latin-1 `é` (0xE9) in comments of the Corefile and of an imported file, and in a
    // quoted log format, where it becomes U+FFFD as in CoreDNS.
    let port = free_port();
    let p = port.port;
    let dir = TempDir::new();
    std::fs::write(dir.0.join("part.conf"), b"# caf\xe9 import\nwhoami\n").unwrap();
    let head = format!(".:{p} {{\n import part.conf\n log . \"{{name}} caf");
    let bytes = [b"# caf\xe9 comment\n", head.as_bytes(), b"\xe9\"\n}\n"].concat();
    let conf = dir.0.join("Corefile");
    std::fs::write(&conf, bytes).unwrap();
    let mut child = Command::new(binary())
        .arg("-conf")
        .arg(&conf)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let mut answered = false;
    while t0.elapsed() < Duration::from_secs(10) && !answered {
        if let Some(st) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
            panic!("ringdns exited with {st}: {err}");
        }
        answered =
            common::udp_exchange(p, &query(1, "latin1.test.", 1), Duration::from_millis(100))
                .is_some();
    }
    common::send_signal(child.id(), "TERM");
    let out = child.wait_with_output().unwrap();
    assert!(answered, "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("latin1.test. caf\u{FFFD}"), "{stdout}");
}

#[test]
fn global_block_errors_name_their_line() {
    let cases: &[(&str, &str)] = &[
        // No host has CPU 4095 in its affinity mask here (cpu_list's largest).
        (
            "{\n udp_batch 8\n cpus 0,4095\n}\n",
            "Corefile:3 - Error during parsing: cpus: CPU 4095 not available to this process (it may run on 0",
        ),
        (
            "{\n cpus 0\n workers 2\n}\n",
            "Corefile:3 - Error during parsing: workers 2 does not match the 1 CPUs listed in cpus",
        ),
        (
            "{\n workers 1\n io_memory 1K\n}\n",
            "Corefile:3 - Error during parsing: io_memory must be at least 64K",
        ),
        (
            "{\n spin_before_park 1s\n}\n",
            "Corefile:2 - Error during parsing: spin_before_park must be at most 100ms",
        ),
        (
            "{\n tcp_max_conns 0\n}\n",
            "Corefile:2 - Error during parsing: '0' is not a number between 1 and 1000000",
        ),
    ];
    for (global, want) in cases {
        let text = format!("{global}.:1053 {{\n whoami\n}}\n");
        let (code, err) = run_expect_failure(&text);
        assert_eq!(code, 1, "exit status for:\n{text}\nstderr: {err}");
        assert!(err.contains(want), "for:\n{text}\nwant {want:?} in: {err}");
    }
}

/// Starts the binary under `prlimit --memlock=LIMIT` (util-linux) on `corefile`.
fn under_memlock(limit: &str, corefile: &std::path::Path) -> std::process::Child {
    Command::new("prlimit")
        .arg(format!("--memlock={limit}"))
        .arg(binary())
        .arg("-conf")
        .arg(corefile)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("prlimit (util-linux) runs")
}

#[test]
fn a_locked_memory_limit_below_glommios_need_fails_at_once_with_how_to_raise_it() {
    let dir = TempDir::new();
    let port = free_port();
    let conf = dir.write("Corefile", &format!(".:{} {{\n whoami\n}}\n", port.port));
    // Soft and hard limit 64 KiB: not enough, and (without CAP_SYS_RESOURCE) not raisable.
    // Where the test runs with that capability (root on a machine, not in a container),
    // ringdns raises the hard limit and starts: then the message cannot be seen here.
    let mut child = under_memlock("65536:65536", &conf);
    let t0 = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break Some(st);
        }
        if common::udp_exchange(
            port.port,
            &query(1, "up.test.", 1),
            Duration::from_millis(50),
        )
        .is_some()
        {
            common::send_signal(child.id(), "TERM");
            break None;
        }
        if t0.elapsed() > Duration::from_secs(5) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running 5 s after start under a 64 KiB RLIMIT_MEMLOCK");
        }
    };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    match status {
        None => {
            eprintln!("ringdns could raise a 64 KiB hard RLIMIT_MEMLOCK here: skipped");
        }
        Some(st) => {
            assert_eq!(st.code(), Some(1), "{stderr}");
            for want in [
                "RLIMIT_MEMLOCK (locked memory) is 64 KiB",
                "need at least 512 KiB",
                "ulimit -l 512",
                "LimitMEMLOCK=512K",
                "--ulimit memlock=524288:524288",
            ] {
                assert!(stderr.contains(want), "{want:?} in {stderr}");
            }
        }
    }

    // A low soft limit under a high enough hard one is raised, and the server serves.
    let mut child = under_memlock("65536:", &conf);
    let t0 = Instant::now();
    let mut answered = false;
    while !answered && t0.elapsed() < Duration::from_secs(10) {
        if let Some(st) = child.try_wait().unwrap() {
            panic!("exited with {st} under a low soft RLIMIT_MEMLOCK");
        }
        answered = common::udp_exchange(
            port.port,
            &query(2, "up.test.", 1),
            Duration::from_millis(100),
        )
        .is_some();
    }
    common::send_signal(child.id(), "TERM");
    let out = child.wait_with_output().unwrap();
    assert!(answered, "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("[INFO] RLIMIT_MEMLOCK raised from 64 KiB to 512 KiB"),
        "{stdout}"
    );
}

#[test]
fn a_listener_that_cannot_be_bound_names_the_line_of_its_block() {
    // 203.0.113.77 (TEST-NET-3) is no address of this host.
    let (code, err) = run_expect_failure(
        ".:1053 {\n whoami\n}\n\nexample.org:1053 {\n bind 203.0.113.77\n whoami\n}\n",
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("Corefile:5 - listen 203.0.113.77:1053: "),
        "{err}"
    );
}

#[test]
fn the_systemd_unit_reloads_with_sigusr1_and_runs_what_make_install_installs() {
    let root = env!("CARGO_MANIFEST_DIR");
    let unit = std::fs::read_to_string(format!("{root}/tuning/ringdns.service")).unwrap();
    let make = std::fs::read_to_string(format!("{root}/Makefile")).unwrap();
    // As CoreDNS's unit: `systemctl reload` sends SIGUSR1.
    assert!(
        unit.contains("\nExecReload=/bin/kill -SIGUSR1 $MAINPID\n"),
        "{unit}"
    );
    let exec = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .unwrap();
    assert!(
        exec.starts_with("/usr/local/bin/ringdns -conf /etc/ringdns/Corefile "),
        "{exec}"
    );
    // make install's defaults put the binary and the Corefile there, and the unit too.
    for line in [
        "PREFIX ?= /usr/local",
        "SYSCONFDIR ?= /etc",
        "install -D -m 755 target/release/ringdns $(DESTDIR)$(PREFIX)/bin/ringdns",
        "$(DESTDIR)$(SYSCONFDIR)/ringdns/Corefile",
        "install -D -m 644 tuning/ringdns.service $(DESTDIR)$(UNITDIR)/ringdns.service",
    ] {
        assert!(make.contains(line), "Makefile lacks {line}");
    }
}
