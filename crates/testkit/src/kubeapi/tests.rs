//! The fake server through a raw HTTP client on a plain socket: what it sends, byte for
//! byte where it matters.

use super::*;
use std::io::{Read, Write};

fn plain(token: Option<&str>) -> FakeApi {
    FakeApi::with(FakeApiOptions {
        tls: false,
        client_auth: false,
        token: token.map(str::to_string),
    })
}

fn connect(api: &FakeApi, target: &str, auth: Option<&str>) -> TcpStream {
    let mut c = TcpStream::connect(api.addr()).unwrap();
    c.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let auth = auth
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        c,
        "GET {target} HTTP/1.1\r\nHost: x\r\n{auth}Connection: close\r\n\r\n"
    )
    .unwrap();
    c
}

/// Reads until EOF, or until `until` appears (then returns what came so far); 5 s at most.
fn read(c: &mut TcpStream, until: Option<&str>) -> String {
    let mut out = Vec::new();
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(5) {
        let mut b = [0u8; 4096];
        match c.read(&mut b) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&b[..n]),
            Err(_) => {}
        }
        if until.is_some_and(|u| String::from_utf8_lossy(&out).contains(u)) {
            break;
        }
    }
    String::from_utf8(out).unwrap()
}

fn get(api: &FakeApi, target: &str, auth: Option<&str>) -> (u16, Value) {
    let text = read(&mut connect(api, target, auth), None);
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    assert!(head.contains("Content-Type: application/json"), "{head}");
    (
        head[9..12].parse().unwrap(),
        serde_json::from_str(body).unwrap(),
    )
}

#[test]
fn discovery_auth_and_not_found() {
    let api = plain(Some("t1"));
    let (c, v) = get(&api, "/version", Some("t1"));
    assert_eq!((c, v["major"].as_str()), (200, Some("1")));
    assert_eq!(
        get(&api, "/apis", Some("t1")).1["groups"][0]["name"],
        "discovery.k8s.io"
    );
    let (c, v) = get(&api, "/api/v1/services", None);
    assert_eq!(c, 401);
    assert_eq!(
        v,
        json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401})
    );
    api.set_token(Some("t2"));
    assert_eq!(get(&api, "/version", Some("t1")).0, 401);
    assert_eq!(get(&api, "/nope", Some("t2")).1["reason"], "NotFound");
    api.fail_next(1, 503);
    assert_eq!(get(&api, "/api/v1/pods", Some("t2")).0, 503);
    assert_eq!(get(&api, "/api/v1/pods", Some("t2")).0, 200);
    let statuses: Vec<u16> = api.requests().iter().map(|r| r.status).collect();
    assert_eq!(statuses, [200, 200, 401, 401, 404, 503, 200]);
}

#[test]
fn list_pages_selectors_and_continue_expiry() {
    let api = plain(None);
    for (ns, n, app) in [
        ("a", "x", "web"),
        ("a", "y", "db"),
        ("b", "x", "web"),
        ("b", "z", "web"),
    ] {
        api.apply(
            objects::service(ns, n)
                .cluster_ips(&["10.0.0.1"])
                .label("app", app)
                .build(),
        );
    }
    let (_, v) = get(
        &api,
        "/api/v1/services?limit=2&labelSelector=app%3Dweb",
        None,
    );
    assert_eq!(v["kind"], "ServiceList");
    assert_eq!(v["metadata"]["resourceVersion"], "4");
    assert_eq!(v["metadata"]["remainingItemCount"], 1);
    let items = v["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert!(items[0].get("kind").is_none() && items[0]["metadata"]["uid"].is_string());
    assert_eq!(
        (
            items[0]["metadata"]["namespace"].as_str(),
            items[1]["metadata"]["namespace"].as_str()
        ),
        (Some("a"), Some("b"))
    );
    let tok = v["metadata"]["continue"]
        .as_str()
        .unwrap()
        .replace('|', "%7C");
    let (_, v2) = get(
        &api,
        &format!("/api/v1/services?limit=2&labelSelector=app%3Dweb&continue={tok}"),
        None,
    );
    assert_eq!(v2["items"][0]["metadata"]["name"], "z");
    assert!(v2["metadata"].get("continue").is_none());
    api.compact();
    let (c, v3) = get(
        &api,
        &format!("/api/v1/services?limit=2&continue={tok}"),
        None,
    );
    assert_eq!((c, v3["reason"].as_str()), (410, Some("Expired")));
    let (_, f) = get(
        &api,
        "/api/v1/services?fieldSelector=metadata.namespace%3Db",
        None,
    );
    assert_eq!(f["items"].as_array().unwrap().len(), 2);
}

#[test]
fn watch_replays_streams_and_expires() {
    let api = plain(None);
    api.apply(objects::namespace("one", &[]));
    api.apply(objects::namespace("two", &[]));
    // From rv 1: the change after it, then live ones, each a line in its own chunk.
    let mut c = connect(
        &api,
        "/api/v1/namespaces?watch=true&resourceVersion=1&allowWatchBookmarks=true",
        None,
    );
    let first = read(&mut c, Some("\r\n\r\n"));
    assert!(
        first.starts_with("HTTP/1.1 200 OK\r\n") && first.contains("Transfer-Encoding: chunked"),
        "{first}"
    );
    assert!(api.wait_watchers("/api/v1/namespaces", 1, Duration::from_secs(5)));
    api.delete("Namespace", "", "one");
    api.bookmark();
    let more = read(&mut c, Some("BOOKMARK"));
    let all = first + &more;
    assert!(
        all.contains(r#""name":"two""#) && all.contains(r#""type":"ADDED""#),
        "{all}"
    );
    assert!(
        all.contains(r#""type":"DELETED""#) && all.contains(r#""resourceVersion":"3""#),
        "{all}"
    );
    // serde_json writes keys sorted ("object" before "type"); clients do not care.
    assert!(all.contains(r#"{"object":{"apiVersion":"v1","kind":"Namespace","metadata":{"resourceVersion":"3"}},"type":"BOOKMARK"}"#), "{all}");
    api.close_watches();
    assert!(read(&mut c, None).ends_with("0\r\n\r\n"), "a clean end");
    // rv "0": the current objects as ADDED; dropped: no terminating chunk.
    let mut c = connect(&api, "/api/v1/namespaces?watch=1&resourceVersion=0", None);
    let text = read(&mut c, Some("two"));
    assert!(text.contains(r#""type":"ADDED""#) && !text.contains(r#""name":"one""#));
    assert!(api.wait_watchers("/api/v1/namespaces", 1, Duration::from_secs(5)));
    api.drop_watches();
    assert!(!read(&mut c, None).ends_with("0\r\n\r\n"));
    // Compacted: ERROR 410 and a clean end.
    api.compact();
    let text = read(
        &mut connect(
            &api,
            "/api/v1/namespaces?watch=true&resourceVersion=2",
            None,
        ),
        None,
    );
    assert!(
        text.contains(r#""type":"ERROR""#)
            && text.contains(r#""code":410"#)
            && text.contains("too old resource version: 2 (3)"),
        "{text}"
    );
}

#[test]
fn periodic_bookmarks() {
    let api = plain(None);
    api.bookmark_every(Some(Duration::from_millis(50)));
    let mut c = connect(
        &api,
        "/api/v1/pods?watch=true&resourceVersion=0&allowWatchBookmarks=true",
        None,
    );
    assert!(read(&mut c, Some("BOOKMARK")).contains(r#""kind":"Pod""#));
    // Not asked for: none.
    let mut c = connect(
        &api,
        "/api/v1/pods?watch=true&resourceVersion=0&timeoutSeconds=1",
        None,
    );
    assert!(!read(&mut c, None).contains("BOOKMARK"));
}

#[test]
fn pct() {
    assert_eq!(pct_decode("a+b%2C%21c%3D%zz%4"), "a b,!c=%zz%4");
}
