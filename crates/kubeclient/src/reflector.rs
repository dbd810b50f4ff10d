//! The list+watch loop of one collection, as client-go's Reflector runs it:
//!
//! 1. list in pages (`limit`, `continue`; a 410 on a continue restarts the list), then hand
//!    the whole list over as [`Event::Replace`];
//! 2. watch from the list's resourceVersion with bookmarks and a random timeoutSeconds in
//!    [min, 2·min]; each `\n`-terminated line is one event, framed in our own buffer;
//! 3. a stream that ends re-watches from the last resourceVersion seen, without a relist;
//!    410 (as HTTP status or ERROR event) relists at once; anything else backs off
//!    (client-go's constants) and re-watches; 429 waits for its Retry-After.

use crate::backoff::Backoff;
use crate::conn::{self, Error};
use crate::http::Step;
use crate::{ApiConfig, Event, Watch, query};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// A single list page or watch line above this size is refused.
const MAX_BODY: usize = 1 << 30;
/// Restarts of one list after a 410 on a continue before it counts as a failure.
const MAX_LIST_RESTARTS: u32 = 5;
/// The longest Retry-After obeyed.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(600);
/// Pages of one list at most (500 × 100 000 objects).
const MAX_PAGES: u32 = 100_000;

#[derive(Deserialize)]
struct List {
    #[serde(default)]
    metadata: ListMeta,
    #[serde(default)]
    items: Option<Vec<Box<RawValue>>>,
}

#[derive(Deserialize, Default)]
struct ListMeta {
    #[serde(rename = "resourceVersion", default)]
    resource_version: Option<String>,
    #[serde(rename = "continue", default)]
    cont: Option<String>,
}

#[derive(Deserialize)]
struct WatchEvent {
    #[serde(rename = "type")]
    kind: String,
    object: Box<RawValue>,
}

#[derive(Deserialize)]
struct Object {
    #[serde(default)]
    metadata: ListMeta,
}

#[derive(Deserialize)]
struct Status {
    #[serde(default)]
    code: Option<u16>,
    #[serde(default)]
    message: Option<String>,
}

/// How a watch (or list) ended.
enum End {
    /// The stream ended normally: watch again from the same resourceVersion.
    Closed,
    /// 410 Gone / Expired: list again now.
    Expired,
    /// Stop was set or the receiver is gone.
    Stopped,
    /// Back off (or wait `after`), then retry.
    Retry {
        msg: String,
        after: Option<Duration>,
    },
}

impl From<Error> for End {
    fn from(e: Error) -> End {
        match e {
            Error::Stopped => End::Stopped,
            Error::Status { code: 410, .. } => End::Expired,
            Error::Status {
                code: 429,
                retry_after,
                ref message,
            } => End::Retry {
                msg: format!("HTTP 429: {message}"),
                after: retry_after,
            },
            e => End::Retry {
                msg: e.to_string(),
                after: None,
            },
        }
    }
}

/// client-go's type description of a collection, for logs.
pub(crate) fn type_name(path: &str) -> String {
    match path.rsplit('/').next().unwrap_or(path) {
        "services" => "*v1.Service".into(),
        "endpointslices" => "*v1.EndpointSlice".into(),
        "namespaces" => "*v1.Namespace".into(),
        "pods" => "*v1.Pod".into(),
        "endpoints" => "*v1.Endpoints".into(),
        _ => path.into(),
    }
}

pub(crate) struct Reflector {
    cfg: Arc<ApiConfig>,
    watch: Watch,
    sink: Sender<(u8, Event)>,
    stop: Arc<AtomicBool>,
    backoff: Backoff,
    type_name: String,
}

impl Reflector {
    pub fn new(
        cfg: Arc<ApiConfig>,
        watch: Watch,
        sink: Sender<(u8, Event)>,
        stop: Arc<AtomicBool>,
    ) -> Self {
        let backoff = Backoff::new(&cfg.tuning);
        let type_name = type_name(watch.path);
        Reflector {
            cfg,
            watch,
            sink,
            stop,
            backoff,
            type_name,
        }
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn send(&self, e: Event) -> bool {
        self.sink.send((self.watch.tag, e)).is_ok()
    }

    /// Waits `after` or the next backoff delay; false when stopped meanwhile.
    fn pause(&mut self, after: Option<Duration>) -> bool {
        let d = match after {
            // Honoured as client-go's request retry does; bounded against a silly value.
            Some(a) => a.min(MAX_RETRY_AFTER),
            None => self.backoff.delay(Instant::now()),
        };
        let stop = self.stop.clone();
        conn::sleep(d, &move || stop.load(Ordering::Relaxed))
    }

    /// Runs until stopped.
    pub fn run(mut self) {
        while !self.stopped() {
            let (items, mut rv) = match self.list() {
                Ok(l) => l,
                Err(End::Stopped) => return,
                Err(End::Closed | End::Expired) => continue,
                Err(End::Retry { msg, after }) => {
                    ringdns_plugin::error!(
                        "plugin/kubernetes: Failed to watch {t}: failed to list {t}: {msg}",
                        t = self.type_name
                    );
                    if !self.pause(after) {
                        return;
                    }
                    continue;
                }
            };
            if !self.send(Event::Replace(items)) {
                return;
            }
            loop {
                match self.watch_once(&mut rv) {
                    End::Closed => {}
                    End::Expired => break,
                    End::Stopped => return,
                    End::Retry { msg, after } => {
                        ringdns_plugin::warning!(
                            "plugin/kubernetes: watch of {} ended with error: {msg}",
                            self.type_name
                        );
                        if !self.pause(after) {
                            return;
                        }
                    }
                }
            }
        }
    }

    fn selectors(&self, q: &mut String) {
        if let Some(l) = self
            .watch
            .label_selector
            .as_deref()
            .filter(|s| !s.is_empty())
        {
            query::push(q, "labelSelector", l);
        }
        if let Some(f) = self
            .watch
            .field_selector
            .as_deref()
            .filter(|s| !s.is_empty())
        {
            query::push(q, "fieldSelector", f);
        }
    }

    /// Reads a whole (non-watch) body, bounded by the idle timeout between bytes.
    fn read_all(&self, mut resp: conn::Response) -> Result<Vec<u8>, End> {
        let mut out = Vec::new();
        let mut last = Instant::now();
        loop {
            match resp.body.step(&mut out) {
                Ok(Step::Data) => {
                    last = Instant::now();
                    if out.len() > MAX_BODY {
                        return Err(End::Retry {
                            msg: "response body too large".into(),
                            after: None,
                        });
                    }
                }
                Ok(Step::End) => return Ok(out),
                Ok(Step::Timeout) => {
                    if self.stopped() {
                        return Err(End::Stopped);
                    }
                    if last.elapsed() > self.cfg.tuning.idle_timeout {
                        return Err(End::Retry {
                            msg: "timeout reading the list".into(),
                            after: None,
                        });
                    }
                }
                Err(e) => {
                    return Err(End::Retry {
                        msg: format!("read: {e}"),
                        after: None,
                    });
                }
            }
        }
    }

    /// Lists every page; the items and the list's resourceVersion.
    fn list(&mut self) -> Result<(Vec<Box<RawValue>>, String), End> {
        let mut restarts = 0;
        'restart: loop {
            let mut items = Vec::new();
            let mut cont: Option<String> = None;
            for _ in 0..MAX_PAGES {
                let mut q = String::new();
                query::push(&mut q, "limit", &self.cfg.tuning.page_limit.to_string());
                if let Some(c) = &cont {
                    query::push(&mut q, "continue", c);
                }
                self.selectors(&mut q);
                let stop = self.stop.clone();
                let r = conn::get(&self.cfg, &format!("{}?{q}", self.watch.path), &move || {
                    stop.load(Ordering::Relaxed)
                });
                let resp = match r {
                    Ok(r) => r,
                    Err(Error::Status { code: 410, .. })
                        if cont.is_some() && restarts < MAX_LIST_RESTARTS =>
                    {
                        // The continue token expired: the list starts again from scratch.
                        restarts += 1;
                        continue 'restart;
                    }
                    Err(Error::Status {
                        code: 410, message, ..
                    }) => {
                        return Err(End::Retry {
                            msg: format!("HTTP 410: {message}"),
                            after: None,
                        });
                    }
                    Err(e) => return Err(e.into()),
                };
                let body = self.read_all(resp)?;
                let page: List = serde_json::from_slice(&body).map_err(|e| End::Retry {
                    msg: format!("unable to decode the list: {e}"),
                    after: None,
                })?;
                items.extend(page.items.unwrap_or_default());
                match page.metadata.cont.filter(|c| !c.is_empty()) {
                    Some(c) => cont = Some(c),
                    None => {
                        let rv = page.metadata.resource_version.unwrap_or_default();
                        return Ok((items, rv));
                    }
                }
            }
            return Err(End::Retry {
                msg: format!("more than {MAX_PAGES} pages"),
                after: None,
            });
        }
    }

    /// One watch request and its stream; `rv` follows the events.
    fn watch_once(&mut self, rv: &mut String) -> End {
        let t = &self.cfg.tuning;
        let min = t.min_watch_timeout.as_secs();
        let timeout = min + fastrand::u64(0..=min);
        let mut q = String::new();
        query::push(&mut q, "allowWatchBookmarks", "true");
        query::push(&mut q, "resourceVersion", rv);
        query::push(&mut q, "timeoutSeconds", &timeout.to_string());
        query::push(&mut q, "watch", "true");
        self.selectors(&mut q);
        let watchdog = Duration::from_secs(timeout) + t.watchdog_slack;
        let short_watch = t.short_watch;
        let stop = self.stop.clone();
        let started = Instant::now();
        let mut resp = match conn::get(&self.cfg, &format!("{}?{q}", self.watch.path), &move || {
            stop.load(Ordering::Relaxed)
        }) {
            Ok(r) => r,
            Err(e) => return e.into(),
        };
        let mut buf = Vec::new();
        let mut last_byte = Instant::now();
        let mut events = 0u64;
        loop {
            let before = buf.len();
            match resp.body.step(&mut buf) {
                Ok(Step::Data) => last_byte = Instant::now(),
                Ok(Step::Timeout) => {
                    if self.stopped() {
                        return End::Stopped;
                    }
                    if last_byte.elapsed() > watchdog {
                        return End::Retry {
                            msg: format!("no data for {} s", watchdog.as_secs()),
                            after: None,
                        };
                    }
                    continue;
                }
                Ok(Step::End) => {
                    if events == 0 && started.elapsed() < short_watch {
                        // client-go's VeryShortWatchError: a server that closes at once.
                        return End::Retry {
                            msg: "very short watch: the server closed it at once with no events"
                                .into(),
                            after: None,
                        };
                    }
                    return End::Closed;
                }
                Err(e) => {
                    return End::Retry {
                        msg: format!("read: {e}"),
                        after: None,
                    };
                }
            }
            // Every complete line is an event; a partial one waits for more bytes.
            let mut start = 0;
            let mut from = before;
            while let Some(nl) = buf[from..].iter().position(|b| *b == b'\n') {
                let line = &buf[start..from + nl];
                let r = self.event(line, rv);
                start = from + nl + 1;
                from = start;
                match r {
                    Ok(true) => events += 1,
                    Ok(false) => {}
                    Err(end) => return end,
                }
            }
            buf.drain(..start);
            if buf.len() > MAX_BODY {
                return End::Retry {
                    msg: "watch event too large".into(),
                    after: None,
                };
            }
        }
    }

    /// Handles one line; Ok(true) when it was an event.
    fn event(&mut self, line: &[u8], rv: &mut String) -> Result<bool, End> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(false);
        }
        let ev: WatchEvent = match serde_json::from_slice(line) {
            Ok(e) => e,
            Err(e) => {
                ringdns_plugin::error!(
                    "plugin/kubernetes: Unable to understand watch event of {}: {e}",
                    self.type_name
                );
                return Ok(false);
            }
        };
        let new_rv = || {
            serde_json::from_str::<Object>(ev.object.get())
                .ok()
                .and_then(|o| o.metadata.resource_version)
        };
        let event = match ev.kind.as_str() {
            "ADDED" | "MODIFIED" | "DELETED" => {
                if let Some(v) = new_rv() {
                    *rv = v;
                }
                match ev.kind.as_str() {
                    "ADDED" => Event::Added(ev.object),
                    "MODIFIED" => Event::Modified(ev.object),
                    _ => Event::Deleted(ev.object),
                }
            }
            "BOOKMARK" => {
                if let Some(v) = new_rv() {
                    *rv = v;
                }
                return Ok(true);
            }
            "ERROR" => {
                let s: Option<Status> = serde_json::from_str(ev.object.get()).ok();
                let code = s.as_ref().and_then(|s| s.code);
                if code == Some(410) {
                    return Err(End::Expired);
                }
                let msg = s.and_then(|s| s.message).unwrap_or_default();
                return Err(End::Retry {
                    msg: format!("watch error {}: {msg}", code.unwrap_or(0)),
                    after: None,
                });
            }
            other => {
                ringdns_plugin::error!(
                    "plugin/kubernetes: Unable to understand watch event of {}: type {other:?}",
                    self.type_name
                );
                return Ok(false);
            }
        };
        if !self.send(event) {
            return Err(End::Stopped);
        }
        Ok(true)
    }
}
