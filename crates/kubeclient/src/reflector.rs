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
use crate::conn::{self, Error, Stream};
use crate::http::{Body, Step};
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

/// Why a list or a watch gave up.
enum Fail {
    /// Stop was set or the receiver is gone.
    Stopped,
    /// Back off (or wait `after`), then retry.
    Retry {
        msg: String,
        after: Option<Duration>,
    },
}

/// A retry after the next backoff delay.
fn retry(msg: impl Into<String>) -> Fail {
    Fail::Retry {
        msg: msg.into(),
        after: None,
    }
}

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        let after = match e {
            Error::Stopped => return Fail::Stopped,
            // 429 waits for its Retry-After.
            Error::Status {
                code: 429,
                retry_after,
                ..
            } => retry_after,
            _ => None,
        };
        Fail::Retry {
            msg: e.to_string(),
            after,
        }
    }
}

/// How a watch ended.
enum End {
    /// The stream ended normally: watch again from the same resourceVersion.
    Closed,
    /// 410 Gone / Expired: list again now.
    Expired,
    /// Stopped, or an error to back off from.
    Failed(Fail),
}

impl From<Fail> for End {
    fn from(f: Fail) -> End {
        End::Failed(f)
    }
}

impl From<Error> for End {
    fn from(e: Error) -> End {
        match e {
            Error::Status { code: 410, .. } => End::Expired,
            e => End::Failed(e.into()),
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

/// The list+watch loop of one [`Watch`], run on its own thread by `spawn_reflector`.
pub(crate) struct Reflector {
    cfg: Arc<ApiConfig>,
    watch: Watch,
    sink: Sender<(u8, Event)>,
    stop: Arc<AtomicBool>,
    backoff: Backoff,
    type_name: String,
}

impl Reflector {
    /// A reflector of `watch` on the API of `cfg`, sending to `sink` until `stop`.
    pub(crate) fn new(
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
        conn::sleep(d, &|| self.stopped())
    }

    /// Runs until stopped.
    pub(crate) fn run(mut self) {
        while !self.stopped() {
            let (items, mut rv) = match self.list() {
                Ok(l) => l,
                Err(Fail::Stopped) => return,
                Err(Fail::Retry { msg, after }) => {
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
                    End::Failed(Fail::Stopped) => return,
                    End::Failed(Fail::Retry { msg, after }) => {
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
    fn read_all(&self, mut body: Body<Box<dyn Stream>>) -> Result<Vec<u8>, Fail> {
        let mut out = Vec::new();
        let mut last = Instant::now();
        loop {
            match body.step(&mut out) {
                Ok(Step::Data) => {
                    last = Instant::now();
                    if out.len() > MAX_BODY {
                        return Err(retry("response body too large"));
                    }
                }
                Ok(Step::End) => return Ok(out),
                Ok(Step::Timeout) => {
                    if self.stopped() {
                        return Err(Fail::Stopped);
                    }
                    if last.elapsed() > self.cfg.tuning.idle_timeout {
                        return Err(retry("timeout reading the list"));
                    }
                }
                Err(e) => return Err(retry(format!("read: {e}"))),
            }
        }
    }

    /// Lists every page; the items and the list's resourceVersion.
    fn list(&self) -> Result<(Vec<Box<RawValue>>, String), Fail> {
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
                let r = conn::get(&self.cfg, &format!("{}?{q}", self.watch.path), &|| {
                    self.stopped()
                });
                let stream = match r {
                    Ok(r) => r,
                    Err(Error::Status { code: 410, .. })
                        if cont.is_some() && restarts < MAX_LIST_RESTARTS =>
                    {
                        // The continue token expired: the list starts again from scratch.
                        restarts += 1;
                        continue 'restart;
                    }
                    // Any other 410 too is an error here: a list has nothing to relist from.
                    Err(e) => return Err(e.into()),
                };
                let body = self.read_all(stream)?;
                let page: List = serde_json::from_slice(&body)
                    .map_err(|e| retry(format!("unable to decode the list: {e}")))?;
                items.extend(page.items.unwrap_or_default());
                match page.metadata.cont.filter(|c| !c.is_empty()) {
                    Some(c) => cont = Some(c),
                    None => {
                        let rv = page.metadata.resource_version.unwrap_or_default();
                        return Ok((items, rv));
                    }
                }
            }
            return Err(retry(format!("more than {MAX_PAGES} pages")));
        }
    }

    /// One watch request and its stream; `rv` follows the events.
    fn watch_once(&self, rv: &mut String) -> End {
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
        let started = Instant::now();
        let mut body = match conn::get(&self.cfg, &format!("{}?{q}", self.watch.path), &|| {
            self.stopped()
        }) {
            Ok(r) => r,
            Err(e) => return e.into(),
        };
        let mut buf = Vec::new();
        let mut last_byte = Instant::now();
        let mut events = 0u64;
        loop {
            let before = buf.len();
            match body.step(&mut buf) {
                Ok(Step::Data) => last_byte = Instant::now(),
                Ok(Step::Timeout) => {
                    if self.stopped() {
                        return Fail::Stopped.into();
                    }
                    if last_byte.elapsed() > watchdog {
                        return retry(format!("no data for {} s", watchdog.as_secs())).into();
                    }
                    continue;
                }
                Ok(Step::End) => {
                    if events == 0 && started.elapsed() < t.short_watch {
                        // client-go's VeryShortWatchError: a server that closes at once.
                        return retry(
                            "very short watch: the server closed it at once with no events",
                        )
                        .into();
                    }
                    return End::Closed;
                }
                Err(e) => return retry(format!("read: {e}")).into(),
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
                return retry("watch event too large").into();
            }
        }
    }

    /// Handles one line; Ok(true) when it was an event.
    fn event(&self, line: &[u8], rv: &mut String) -> Result<bool, End> {
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
        let event: fn(Box<RawValue>) -> Event = match ev.kind.as_str() {
            "ADDED" => Event::Added,
            "MODIFIED" => Event::Modified,
            "DELETED" => Event::Deleted,
            "BOOKMARK" => {
                follow(rv, &ev.object);
                return Ok(true);
            }
            "ERROR" => {
                let s: Option<Status> = serde_json::from_str(ev.object.get()).ok();
                let code = s.as_ref().and_then(|s| s.code);
                if code == Some(410) {
                    return Err(End::Expired);
                }
                let msg = s.and_then(|s| s.message).unwrap_or_default();
                return Err(retry(format!("watch error {}: {msg}", code.unwrap_or(0))).into());
            }
            other => {
                ringdns_plugin::error!(
                    "plugin/kubernetes: Unable to understand watch event of {}: type {other:?}",
                    self.type_name
                );
                return Ok(false);
            }
        };
        follow(rv, &ev.object);
        if !self.send(event(ev.object)) {
            return Err(Fail::Stopped.into());
        }
        Ok(true)
    }
}

/// Moves `rv` to the resourceVersion of `object`, if it has one.
fn follow(rv: &mut String, object: &RawValue) {
    if let Some(v) = serde_json::from_str::<Object>(object.get())
        .ok()
        .and_then(|o| o.metadata.resource_version)
    {
        *rv = v;
    }
}
