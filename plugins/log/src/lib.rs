//! log: one line per query in CoreDNS's formats, buffered per core and written once per
//! batch of queries instead of once per query.

#![forbid(unsafe_code)]

mod classify;
mod format;

use classify::Class;
use format::{Outcome, Piece};
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::wire::{self, Header, MessageWriter, name_to_wire};
use ringdns_plugin::wrap::{self, Wrap};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome as Served, Plugin, Request, Serve, Serves, Status,
    client_write,
};
use std::cell::RefCell;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

/// Lines are written out once the buffer holds this much, even inside a batch.
const FLUSH_AT: usize = 64 << 10;

/// One `log` line of the Corefile (CoreDNS's Rule): which names, which reply classes, which
/// format.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Zone whose names this rule logs, lower-case wire form.
    scope: Vec<u8>,
    /// Reply classes to log; empty means all.
    classes: Vec<Class>,
    /// The compiled format.
    format: Vec<Piece>,
}

/// The per-core instance: the rules and the core's line buffer.
pub struct Log {
    rules: Arc<Vec<Rule>>,
    buf: RefCell<String>,
}

impl Plugin for Log {
    const NAME: &'static str = "log";
    type Config = Vec<Rule>;
    type Place = Serves;

    fn setup(d: &mut Dispenser<'_>, _block: &mut BlockSetup) -> Result<Vec<Rule>, Error> {
        let mut rules: Vec<Rule> = Vec::new();
        while d.next() {
            let mut args = d.remaining_args();
            let start = rules.len();
            let mut format = format::COMMON.to_string();
            if args.len() > 1 && args[args.len() - 1].contains('{') {
                format = args.pop().unwrap_or_default();
            }
            if args.is_empty() {
                args.push(".".to_string());
            }
            let pieces = format::compile(&format);
            for scope in &args {
                let wire = name_to_wire(scope)
                    .map_err(|e| d.err(&format!("invalid name '{scope}': {e}")))?;
                rules.push(Rule {
                    scope: wire,
                    classes: Vec::new(),
                    format: pieces.clone(),
                });
            }
            let mut classes = Vec::new();
            while d.next_block() {
                match d.val() {
                    "class" => {
                        let names = d.remaining_args();
                        if names.is_empty() {
                            return Err(d.arg_err());
                        }
                        for n in names {
                            let c = Class::from_name(&n)
                                .ok_or_else(|| d.err(&format!("invalid Class: {n}")))?;
                            if !classes.contains(&c) {
                                classes.push(c);
                            }
                        }
                    }
                    _ => return Err(d.arg_err()),
                }
            }
            if classes.contains(&Class::All) {
                classes.clear();
            }
            for r in &mut rules[start..] {
                r.classes = classes.clone();
            }
        }
        Ok(rules)
    }
}

impl Serve for Log {
    fn build(config: &Arc<Vec<Rule>>, _core: &CoreInfo) -> Option<Self> {
        Some(Log {
            rules: config.clone(),
            buf: RefCell::new(String::with_capacity(FLUSH_AT + 4096)),
        })
    }

    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Served> {
        wrap::serve(self, req, next)
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        wrap::serve_now(self, req, next)
    }

    const AFTER_BATCH: bool = true;

    fn after_batch(&self) {
        let mut buf = self.buf.borrow_mut();
        if !buf.is_empty() {
            ringdns_plugin::logging::write_raw(buf.as_bytes());
            buf.clear();
        }
    }
}

/// A line for each query served, on the pass that served it.
impl Wrap for Log {
    /// The index of the rule the query's name falls under, and when the query came.
    type Before = (usize, Instant);

    /// The first rule whose zone holds the name; none for the server's own background
    /// refreshes, which are not client queries. The start is the request's time (the
    /// batch's: no clock read).
    fn before(&self, req: &Request<'_>) -> Option<(usize, Instant)> {
        if req.is_refresh() {
            return None;
        }
        let name = req.query.qname();
        let rule = self
            .rules
            .iter()
            .position(|r| name.is_subdomain_of(&r.scope))?;
        Some((rule, req.received()))
    }

    fn after(
        &self,
        req: &mut Request<'_>,
        (rule, start): (usize, Instant),
        status: Status,
    ) -> Status {
        self.line(&self.rules[rule], req, status, start)
    }
}

impl Log {
    /// Renders the query's line (when its class is logged) into the buffer.
    fn line(&self, rule: &Rule, req: &mut Request<'_>, status: Status, start: Instant) -> Status {
        let duration = start.elapsed();
        if !client_write(status.rcode) {
            // Write the error reply the server would write, so the line shows its size.
            MessageWriter::reply(&req.query, req.reply, status.rcode).finish();
            req.finalize_reply();
        }
        let outcome = Outcome {
            rcode: reply_rcode(req.reply, status.rcode),
            rsize: req.reply.len(),
            flags: Header::of(req.reply).map_or(0, Header::flags),
            duration,
        };
        if rule.classes.is_empty()
            || rule
                .classes
                .contains(&classify::classify(req, outcome.rcode))
        {
            let mut buf = self.buf.borrow_mut();
            buf.push_str("[INFO] ");
            format::render(&rule.format, req, &outcome, &mut buf);
            buf.push('\n');
            // The server flushes after each batch and once per executor turn for the
            // deferred queries that finished in it (runtime::serve::flush_soon).
            if buf.len() >= FLUSH_AT {
                ringdns_plugin::logging::write_raw(buf.as_bytes());
                buf.clear();
            }
        }
        status
    }
}

/// The reply's full rcode: header bits plus the OPT's extended bits when present.
fn reply_rcode(reply: &[u8], fallback: u8) -> u16 {
    wire::reply::full_rcode(reply).unwrap_or(u16::from(fallback))
}

impl Drop for Log {
    fn drop(&mut self) {
        self.after_batch();
    }
}

ringdns_plugin::export!(Log);
