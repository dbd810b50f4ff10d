//! The client against testkit's fake API server over real sockets on loopback.

use ringdns_kubeclient::{ApiConfig, Event, TlsFiles, Tuning, Watch, spawn_reflector};
use ringdns_testkit::TempDir;
use ringdns_testkit::kubeapi::{ApiRequest, FakeApi, FakeApiOptions, objects};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const SERVICES: &str = "/api/v1/services";
const WAIT: Duration = Duration::from_secs(5);

/// Short retries, so that a test never waits client-go's 800 ms.
fn fast() -> Tuning {
    Tuning {
        backoff_init: Duration::from_millis(20),
        backoff_cap: Duration::from_millis(200),
        short_watch: Duration::ZERO,
        connect_timeout: Duration::from_secs(2),
        read_tick: Duration::from_millis(100),
        idle_timeout: Duration::from_secs(5),
        ..Tuning::default()
    }
}

/// A config for `api` through its kubeconfig (token, CA by relative path); the files are
/// read here, so their directory goes with the call.
fn config(api: &FakeApi, name: &str) -> ApiConfig {
    let dir = TempDir::new(&format!("kc-{name}"));
    ApiConfig::from_kubeconfig(&api.kubeconfig(dir.path()), None)
        .unwrap()
        .with_tuning(fast())
}

struct Run {
    rx: Receiver<(u8, Event)>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

fn run(cfg: ApiConfig, path: &'static str, labels: Option<&str>, fields: Option<&str>) -> Run {
    let (tx, rx) = channel();
    let stop = Arc::new(AtomicBool::new(false));
    let w = Watch {
        tag: 7,
        path,
        label_selector: labels.map(str::to_string),
        field_selector: fields.map(str::to_string),
    };
    let handle = spawn_reflector(Arc::new(cfg), w, tx, stop.clone()).unwrap();
    Run {
        rx,
        stop,
        handle: Some(handle),
    }
}

fn parse(raw: &serde_json::value::RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap()
}

fn name(v: &Value) -> String {
    v["metadata"]["name"].as_str().unwrap().to_string()
}

impl Run {
    fn next(&self) -> Event {
        let (tag, e) = self.rx.recv_timeout(WAIT).expect("an event within 5 s");
        assert_eq!(tag, 7);
        e
    }

    fn replace(&self) -> Vec<String> {
        match self.next() {
            Event::Replace(items) => items.iter().map(|i| name(&parse(i))).collect(),
            e => panic!("expected Replace, got {e:?}"),
        }
    }

    fn quiet(&self, d: Duration) {
        if let Ok(e) = self.rx.recv_timeout(d) {
            panic!("unexpected event {e:?}");
        }
    }

    /// Sets stop and returns how long the thread took to end.
    fn stop(mut self) -> Duration {
        let t = Instant::now();
        self.stop.store(true, Ordering::Relaxed);
        self.handle.take().unwrap().join().unwrap();
        t.elapsed()
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn svc(ns: &str, n: &str, ip: &str) -> Value {
    objects::service(ns, n)
        .cluster_ips(&[ip])
        .port("http", "TCP", 80)
        .label("app", "web")
        .build()
}

fn lists(reqs: &[ApiRequest], path: &str) -> Vec<ApiRequest> {
    reqs.iter()
        .filter(|r| r.path == path && !r.is_watch())
        .cloned()
        .collect()
}

fn watches(reqs: &[ApiRequest], path: &str) -> Vec<ApiRequest> {
    reqs.iter()
        .filter(|r| r.path == path && r.is_watch())
        .cloned()
        .collect()
}

/// Waits for the `n`-th watch request of `path` and for it to be the only one open.
fn rewatched(api: &FakeApi, path: &str, n: usize) {
    let t = Instant::now();
    while watches(&api.requests(), path).len() < n && t.elapsed() < WAIT {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(watches(&api.requests(), path).len(), n);
    assert!(api.wait_watchers(path, 1, WAIT));
}

#[test]
fn pagination_in_several_pages() {
    let api = FakeApi::start();
    for i in 0..5 {
        api.apply(svc("default", &format!("s{i}"), &format!("10.0.0.{i}")));
    }
    let r = run(
        config(&api, "pages").with_tuning(Tuning {
            page_limit: 2,
            ..fast()
        }),
        SERVICES,
        None,
        None,
    );
    assert_eq!(r.replace(), ["s0", "s1", "s2", "s3", "s4"]);
    let l = lists(&api.requests(), SERVICES);
    assert_eq!(l.len(), 3, "{l:?}");
    assert!(l.iter().all(|r| r.param("limit") == Some("2")));
    assert_eq!(l[0].param("continue"), None);
    assert!(l[1].param("continue").is_some() && l[2].param("continue").is_some());
    assert!(r.stop() < Duration::from_secs(2));
}

#[test]
fn events_while_watching_and_request_shape() {
    let api = FakeApi::start();
    api.apply(svc("default", "a", "10.0.0.1"));
    api.apply(
        objects::service("default", "other")
            .cluster_ips(&["10.0.0.9"])
            .label("app", "db")
            .build(),
    );
    let r = run(
        config(&api, "events"),
        SERVICES,
        Some("app in (web, api)"),
        None,
    );
    assert_eq!(r.replace(), ["a"]);
    assert!(api.wait_watchers(SERVICES, 1, WAIT));
    api.apply(svc("default", "b", "10.0.0.2"));
    match r.next() {
        Event::Added(o) => assert_eq!(name(&parse(&o)), "b"),
        e => panic!("{e:?}"),
    }
    api.apply(
        objects::service("default", "a")
            .cluster_ips(&["10.0.0.1"])
            .port("dns", "UDP", 53)
            .label("app", "web")
            .build(),
    );
    match r.next() {
        Event::Modified(o) => assert_eq!(parse(&o)["spec"]["ports"][0]["port"], 53),
        e => panic!("{e:?}"),
    }
    assert!(api.delete("Service", "default", "b"));
    match r.next() {
        Event::Deleted(o) => assert_eq!(name(&parse(&o)), "b"),
        e => panic!("{e:?}"),
    }
    // Outside the selector: nothing.
    api.apply(
        objects::service("default", "db2")
            .cluster_ips(&["10.0.0.8"])
            .label("app", "db")
            .build(),
    );
    r.quiet(Duration::from_millis(200));
    let reqs = api.requests();
    let list = &lists(&reqs, SERVICES)[0];
    let watch = &watches(&reqs, SERVICES)[0];
    assert_eq!(list.param("labelSelector"), Some("app in (web, api)"));
    assert_eq!(watch.param("labelSelector"), Some("app in (web, api)"));
    assert_eq!(watch.param("allowWatchBookmarks"), Some("true"));
    assert_eq!(
        watch.param("resourceVersion"),
        Some("2"),
        "the list's resourceVersion"
    );
    let t: u64 = watch.param("timeoutSeconds").unwrap().parse().unwrap();
    assert!((300..=600).contains(&t), "{t}");
    assert_eq!(watch.authorization.as_deref(), Some("Bearer fake-token"));
    assert_eq!(watch.accept.as_deref(), Some("application/json"));
    assert!(watch.user_agent.as_deref().unwrap().starts_with("ringdns/"));
    assert!(r.stop() < Duration::from_secs(2));
}

fn expect_added(r: &Run, names: &[&str]) {
    for n in names {
        match r.next() {
            Event::Added(o) => assert_eq!(name(&parse(&o)), *n),
            e => panic!("{e:?}"),
        }
    }
}

#[test]
fn split_and_coalesced_chunks() {
    let api = FakeApi::start();
    let r = run(config(&api, "chunks"), SERVICES, None, None);
    assert!(r.replace().is_empty());
    assert!(api.wait_watchers(SERVICES, 1, WAIT));
    api.split_chunks(Some(7));
    api.apply(svc("default", "a", "10.0.0.1"));
    api.apply(svc("default", "b", "10.0.0.2"));
    expect_added(&r, &["a", "b"]);
    // Several events in one chunk, then in one chunk cut in 3-byte pieces.
    api.split_chunks(None);
    api.coalesce(true);
    api.freeze_watches(true);
    api.apply(svc("default", "c", "10.0.0.3"));
    api.apply(svc("default", "d", "10.0.0.4"));
    api.freeze_watches(false);
    expect_added(&r, &["c", "d"]);
    api.split_chunks(Some(3));
    api.freeze_watches(true);
    api.apply(svc("default", "e", "10.0.0.5"));
    api.apply(svc("default", "f", "10.0.0.6"));
    api.freeze_watches(false);
    expect_added(&r, &["e", "f"]);
    assert_eq!(lists(&api.requests(), SERVICES).len(), 1);
}

#[test]
fn gone_on_watch_relists_without_the_deleted() {
    let api = FakeApi::start();
    api.apply(svc("default", "a", "10.0.0.1"));
    api.apply(svc("default", "b", "10.0.0.2"));
    let r = run(config(&api, "gone"), SERVICES, None, None);
    assert_eq!(r.replace(), ["a", "b"]);
    assert!(api.wait_watchers(SERVICES, 1, WAIT));
    // The watch lags, b goes, history is compacted: ERROR 410, relist at once.
    api.freeze_watches(true);
    api.delete("Service", "default", "b");
    api.compact();
    assert_eq!(r.replace(), ["a"]);
    api.freeze_watches(false);
    assert!(api.wait_watchers(SERVICES, 1, WAIT));
    // HTTP 410 on the watch request itself: relist too.
    api.fail_next(1, 410);
    api.close_watches();
    assert_eq!(r.replace(), ["a"]);
    // ERROR 410 on an open watch, without a compaction.
    rewatched(&api, SERVICES, 3);
    api.expire_watches();
    assert_eq!(r.replace(), ["a"]);
    let reqs = api.requests();
    assert_eq!(lists(&reqs, SERVICES).len(), 4);
    assert!(watches(&reqs, SERVICES).iter().any(|w| w.status == 410));
}

#[test]
fn too_many_requests_waits_for_retry_after() {
    let api = FakeApi::start();
    api.apply(svc("default", "a", "10.0.0.1"));
    api.fail_next(1, 429);
    let t = Instant::now();
    let r = run(config(&api, "429"), SERVICES, None, None);
    assert_eq!(r.replace(), ["a"]);
    // Retry-After: 1, where the backoff alone would have waited 20–40 ms.
    assert!(
        t.elapsed() >= Duration::from_millis(950),
        "{:?}",
        t.elapsed()
    );
    let s: Vec<u16> = lists(&api.requests(), SERVICES)
        .iter()
        .map(|r| r.status)
        .collect();
    assert_eq!(s, [429, 200]);
}

/// A server that lists nothing and then holds every watch open without a byte.
fn hung_server() -> (std::net::SocketAddr, Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{Read, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let watches = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let w = watches.clone();
    l.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        // Bounded: 20 connections or 10 s, whichever comes first.
        let (start, mut n) = (Instant::now(), 0);
        while n < 20 && start.elapsed() < Duration::from_secs(10) {
            let mut c = match l.accept() {
                Ok((c, _)) => c,
                Err(_) => {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                }
            };
            n += 1;
            c.set_nonblocking(false).unwrap();
            let w = w.clone();
            std::thread::spawn(move || {
                c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
                let mut buf = [0u8; 4096];
                let n = c.read(&mut buf).unwrap_or(0);
                let req = String::from_utf8_lossy(&buf[..n]).to_string();
                if req.contains("watch=true") {
                    w.fetch_add(1, Ordering::Relaxed);
                    let _ = c.write_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
                    // Silent until the client gives up (bounded: 5 s).
                    let _ = c.set_read_timeout(Some(Duration::from_secs(5)));
                    let _ = c.read(&mut buf);
                } else {
                    let body = br#"{"kind":"ServiceList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[]}"#;
                    let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
                    let _ = c.write_all(head.as_bytes());
                    let _ = c.write_all(body);
                }
            });
        }
    });
    (addr, watches)
}

#[test]
fn watchdog_ends_a_silent_watch() {
    let (addr, watches) = hung_server();
    // timeoutSeconds 0 (only here) makes the watchdog the slack alone.
    let tuning = Tuning {
        min_watch_timeout: Duration::ZERO,
        watchdog_slack: Duration::from_millis(300),
        ..fast()
    };
    let cfg = ApiConfig::from_endpoint(&format!("http://{addr}"), None)
        .unwrap()
        .with_tuning(tuning);
    let r = run(cfg, SERVICES, None, None);
    assert!(r.replace().is_empty());
    let t = Instant::now();
    while watches.load(Ordering::Relaxed) < 2 && t.elapsed() < WAIT {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        watches.load(Ordering::Relaxed) >= 2,
        "a second watch after the watchdog"
    );
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    r.quiet(Duration::from_millis(10));
}

#[test]
fn gone_on_continue_restarts_the_list() {
    let api = FakeApi::start();
    for i in 0..5 {
        api.apply(svc("default", &format!("s{i}"), &format!("10.0.0.{i}")));
    }
    api.compact_on_page(1);
    let r = run(
        config(&api, "continue").with_tuning(Tuning {
            page_limit: 2,
            ..fast()
        }),
        SERVICES,
        None,
        None,
    );
    assert_eq!(r.replace(), ["s0", "s1", "s2", "s3", "s4"]);
    let l = lists(&api.requests(), SERVICES);
    let shape: Vec<(bool, u16)> = l
        .iter()
        .map(|r| (r.param("continue").is_some(), r.status))
        .collect();
    assert_eq!(
        shape,
        [
            (false, 200),
            (true, 410),
            (false, 200),
            (true, 200),
            (true, 200)
        ]
    );
}

#[test]
fn stream_end_rewatches_from_rv_without_relist_and_bookmarks_move_rv() {
    let api = FakeApi::start();
    api.apply(svc("default", "a", "10.0.0.1"));
    let r = run(config(&api, "close"), SERVICES, None, None);
    assert_eq!(r.replace(), ["a"]);
    assert!(api.wait_watchers(SERVICES, 1, WAIT));
    api.apply(svc("default", "b", "10.0.0.2"));
    expect_added(&r, &["b"]);
    api.close_watches();
    rewatched(&api, SERVICES, 2);
    // A change elsewhere moves the global resourceVersion; a bookmark tells the watch.
    api.apply(objects::namespace("kube-system", &[]));
    api.bookmark();
    let rv = api.resource_version();
    // Let the bookmark go out, then end the stream again.
    std::thread::sleep(Duration::from_millis(200));
    api.close_watches();
    rewatched(&api, SERVICES, 3);
    r.quiet(Duration::from_millis(100));
    let reqs = api.requests();
    assert_eq!(lists(&reqs, SERVICES).len(), 1, "no relist");
    let w = watches(&reqs, SERVICES);
    assert_eq!(w.len(), 3);
    assert_eq!(w[0].param("resourceVersion"), Some("1"));
    assert_eq!(
        w[1].param("resourceVersion"),
        Some("2"),
        "from the last event"
    );
    assert_eq!(
        w[2].param("resourceVersion"),
        Some(rv.to_string().as_str()),
        "from the bookmark"
    );
}

#[test]
fn server_errors_back_off_and_recover() {
    let api = FakeApi::start();
    api.apply(svc("default", "a", "10.0.0.1"));
    api.fail_next(2, 500);
    let r = run(config(&api, "fail"), SERVICES, None, None);
    assert_eq!(r.replace(), ["a"]);
    let s: Vec<u16> = lists(&api.requests(), SERVICES)
        .iter()
        .map(|r| r.status)
        .collect();
    assert_eq!(s, [500, 500, 200]);
    // The same on a watch: back off, re-watch from rv (no relist).
    assert!(api.wait_watchers(SERVICES, 1, WAIT));
    api.fail_next(2, 500);
    api.close_watches();
    rewatched(&api, SERVICES, 4);
    api.apply(svc("default", "b", "10.0.0.2"));
    expect_added(&r, &["b"]);
    let reqs = api.requests();
    assert_eq!(lists(&reqs, SERVICES).len(), 3);
    let w: Vec<u16> = watches(&reqs, SERVICES).iter().map(|r| r.status).collect();
    assert_eq!(w, [200, 500, 500, 200]);
}

#[test]
fn unauthorized_then_rotated_token_in_the_incluster_dir() {
    let api = FakeApi::start();
    api.apply(svc("default", "a", "10.0.0.1"));
    // The token file is read before each request: the directory lives as long as the test.
    let sa = TempDir::new("kc-incluster");
    let dir = api.incluster_dir(sa.path());
    let env: Vec<(String, String)> = api
        .incluster_env()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .chain([(
            "RINGDNS_K8S_SERVICEACCOUNT_DIR".to_string(),
            dir.display().to_string(),
        )])
        .collect();
    let lookup = move |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let cfg = ApiConfig::in_cluster_with_env(&lookup)
        .unwrap()
        .with_tuning(fast());
    assert_eq!(cfg.host(), api.addr().to_string());
    api.set_token(Some("rotated"));
    let r = run(cfg, SERVICES, None, None);
    let t = Instant::now();
    while !api.requests().iter().any(|r| r.status == 401) && t.elapsed() < WAIT {
        std::thread::sleep(Duration::from_millis(10));
    }
    r.quiet(Duration::from_millis(50));
    std::fs::write(dir.join("token"), "rotated\n").unwrap();
    assert_eq!(r.replace(), ["a"]);
    let l = lists(&api.requests(), SERVICES);
    assert_eq!(
        l.first().unwrap().authorization.as_deref(),
        Some("Bearer fake-token")
    );
    assert_eq!(l.first().unwrap().status, 401);
    assert_eq!(
        l.last().unwrap().authorization.as_deref(),
        Some("Bearer rotated")
    );
    assert_eq!(l.last().unwrap().status, 200);
}

#[test]
fn kubeconfig_context_argument() {
    let api = FakeApi::start();
    api.apply(objects::namespace("default", &[("team", "a")]));
    api.apply(objects::namespace("other", &[]));
    let dir = TempDir::new("kc-context");
    let p = api.kubeconfig(dir.path());
    let text = std::fs::read_to_string(&p)
        .unwrap()
        .replace("current-context: fake", "current-context: unreachable");
    std::fs::write(&p, text).unwrap();
    assert_eq!(
        ApiConfig::from_kubeconfig(&p, None).unwrap().host(),
        "127.0.0.1:1"
    );
    let cfg = ApiConfig::from_kubeconfig(&p, Some("fake"))
        .unwrap()
        .with_tuning(fast());
    assert_eq!(cfg.host(), api.addr().to_string());
    let r = run(cfg, "/api/v1/namespaces", Some("team=a"), None);
    assert_eq!(r.replace(), ["default"]);
    assert!(
        ApiConfig::from_kubeconfig(&p, Some("nope"))
            .unwrap_err()
            .contains("nope")
    );
}

#[test]
fn client_certificate_required() {
    let api = FakeApi::with(FakeApiOptions {
        client_auth: true,
        token: None,
        ..FakeApiOptions::default()
    });
    api.apply(objects::pod("default", "p1", "10.1.0.5").build());
    api.apply(
        objects::pod("default", "p2", "10.1.0.6")
            .phase("Failed")
            .build(),
    );
    let tmp = TempDir::new("kc-clientcert");
    let dir = tmp.path();
    let (cert, key, ca) = api.client_cert_files(dir);
    let cfg = ApiConfig::from_endpoint(
        &api.url(),
        Some(TlsFiles {
            cert: &cert,
            key: &key,
            ca: &ca,
        }),
    )
    .unwrap()
    .with_tuning(fast());
    let fs = "status.phase!=Succeeded,status.phase!=Failed,status.phase!=Unknown";
    let r = run(cfg, "/api/v1/pods", None, Some(fs));
    assert_eq!(r.replace(), ["p1"]);
    assert_eq!(
        lists(&api.requests(), "/api/v1/pods")[0].param("fieldSelector"),
        Some(fs)
    );
    drop(r);
    // The same certificate through testkit's kubeconfig, in its base64 -data fields.
    let cfg = ApiConfig::from_kubeconfig(&api.kubeconfig(dir), None)
        .unwrap()
        .with_tuning(fast());
    let r = run(cfg, "/api/v1/pods", None, Some(fs));
    assert_eq!(r.replace(), ["p1"]);
    drop(r);
    // The CA alone (no client certificate): the handshake is refused, no request is seen.
    let n = api.requests().len();
    let kc = dir.join("kc-nocert");
    std::fs::write(
        &kc,
        format!(
            "current-context: c\nclusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority: ca.crt\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\nusers:\n- name: u\n  user: {{}}\n",
            api.url()
        ),
    )
    .unwrap();
    let r = run(
        ApiConfig::from_kubeconfig(&kc, None)
            .unwrap()
            .with_tuning(fast()),
        "/api/v1/pods",
        None,
        None,
    );
    r.quiet(Duration::from_millis(400));
    assert_eq!(api.requests().len(), n);
    assert!(r.stop() < Duration::from_secs(2));
}

#[test]
fn endpoint_http() {
    let api = FakeApi::with(FakeApiOptions {
        tls: false,
        token: None,
        ..FakeApiOptions::default()
    });
    api.apply(
        objects::endpoint_slice("default", "web-abc", "web", "IPv4")
            .endpoint(
                objects::endpoint(&["10.2.0.1"])
                    .hostname("h1")
                    .target_pod("web-0")
                    .node("n1")
                    .zone("z1"),
            )
            .port("http", "TCP", 80)
            .build(),
    );
    let cfg = ApiConfig::from_endpoint(&api.url(), None)
        .unwrap()
        .with_tuning(fast());
    assert!(!cfg.is_https());
    let r = run(cfg, "/apis/discovery.k8s.io/v1/endpointslices", None, None);
    match r.next() {
        Event::Replace(items) => {
            let v = parse(&items[0]);
            assert_eq!(v["addressType"], "IPv4");
            assert_eq!(v["endpoints"][0]["targetRef"]["namespace"], "default");
            assert_eq!(v["metadata"]["labels"]["kubernetes.io/service-name"], "web");
            assert!(v.get("kind").is_none(), "list items carry no kind");
        }
        e => panic!("{e:?}"),
    }
    let sink = ringdns_plugin::metrics::registry::collect();
    let host = api.addr().to_string();
    assert!(
        sink.get(
            "coredns_kubernetes_rest_client_requests_total",
            &["200", "GET", &host]
        )
        .is_some()
    );
    assert!(
        sink.get(
            "coredns_kubernetes_rest_client_request_duration_seconds",
            &["GET", &host]
        )
        .is_some()
    );
    assert!(
        sink.get(
            "coredns_kubernetes_rest_client_rate_limiter_duration_seconds",
            &["GET", &host]
        )
        .is_some()
    );
}

#[test]
fn stop_ends_threads_while_watching_and_in_backoff() {
    let api = FakeApi::start();
    let a = run(config(&api, "stop1"), SERVICES, None, None);
    assert!(a.replace().is_empty());
    assert!(api.wait_watchers(SERVICES, 1, WAIT));
    let took = a.stop();
    assert!(took < Duration::from_millis(1500), "{took:?}");
    assert!(api.wait_watchers(SERVICES, 0, WAIT));
    // In a long backoff after failures.
    api.fail_next(1000, 503);
    let slow = Tuning {
        backoff_init: Duration::from_secs(20),
        ..fast()
    };
    let b = run(
        config(&api, "stop2").with_tuning(slow),
        SERVICES,
        None,
        None,
    );
    let t = Instant::now();
    while !api.requests().iter().any(|r| r.status == 503) && t.elapsed() < WAIT {
        std::thread::sleep(Duration::from_millis(10));
    }
    let took = b.stop();
    assert!(took < Duration::from_millis(1500), "{took:?}");
    // A dead server: connection refused, backoff, stop.
    let dead = FakeApi::start();
    let cfg = config(&dead, "stop3");
    drop(dead);
    let c = run(cfg, SERVICES, None, None);
    std::thread::sleep(Duration::from_millis(100));
    assert!(c.stop() < Duration::from_millis(1500));
}
