//! hosts: A, AAAA and PTR answers from a hosts file and from lines inlined in the Corefile,
//! as CoreDNS's hosts plugin (`plugin/hosts`).
//!
//! Setup parses the directive (`setup.rs`), the inline lines and the file (`hostsfile.rs`)
//! and merges them into one immutable table (`data.rs`) in a [`Snapshot`] that every core
//! reads without a lock. Unless `reload 0`, a thread of the configuration's
//! ([`poll_while`]) looks at the file's modification time and size every `reload`, as
//! CoreDNS does, and replaces the table whole when either changed. Queries are answered on
//! the first pass (`serve_now`): hosts never waits.
//!
//! What a query gets, as CoreDNS's `ServeDNS` decides it:
//!
//! - a name outside the plugin's zones: the next plugin (PTR queries excepted: they are
//!   looked up whatever their zone);
//! - PTR: the names of the address the reverse name stands for, or the next plugin when
//!   there are none (whatever `fallthrough` says);
//! - A, AAAA: the addresses of the name (its own, else those of a wildcard one label up);
//! - other types: nothing to answer (the next plugin with `fallthrough_unsupported`, when
//!   `fallthrough` covers the name);
//! - no record and a name without addresses: the next plugin when `fallthrough` covers the
//!   name, else SERVFAIL (CoreDNS's choice: it has no SOA for an NXDOMAIN);
//! - no record for a name with addresses: NODATA (NOERROR, AA, nothing in any section);
//! - records: NOERROR, AA, the records owned by the question name, TTL `ttl`, class IN.

#![forbid(unsafe_code)]

mod data;
mod hostsfile;
mod metrics;
mod setup;

use data::{Data, reverse_addr};
use hostsfile::Parsed;
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::snapshot::{Snapshot, poll_while};
use ringdns_plugin::wire::class::IN;
use ringdns_plugin::wire::rcode::{NOERROR, SERVFAIL};
use ringdns_plugin::wire::rtype::{A, AAAA, PTR};
use ringdns_plugin::wire::{MessageWriter, Name, Owner, Section};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, Request, Serve, Serves, Status,
    next_or_failure, next_or_failure_now,
};
use setup::Options;
use std::cell::Cell;
use std::io::Read as _;
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

/// The hosts plugin's instance on one core: the directive's shared state.
pub struct Hosts {
    inner: Arc<Inner>,
}

/// What setup made of one `hosts` directive, shared by every core.
pub struct Config {
    inner: Arc<Inner>,
}

/// One directive's state: its options, its inline entries, and what queries read.
pub(crate) struct Inner {
    options: Options,
    /// The inline lines, parsed once: every rebuild merges them with the file anew.
    inline: Parsed,
    /// The merged table queries read.
    data: Snapshot<Data>,
    /// The file as the metrics label it.
    label: String,
}

/// What the file was when it was last read: CoreDNS's change check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    mtime: SystemTime,
    size: u64,
}

/// What looking at the file found.
enum Look {
    /// Read: its stamp and entries.
    Read(Stamp, Parsed),
    /// Unchanged since the stamp given.
    Same,
    /// Not there.
    Missing,
    /// There but unreadable (or not a file): what was served from it is kept.
    Failed(std::io::Error),
}

/// Reads `path` unless its stamp is still `last`.
fn read_file(path: &Path, last: Option<Stamp>, options: &Options) -> Look {
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Look::Missing,
        Err(e) => return Look::Failed(e),
    };
    let meta = match f.metadata() {
        Ok(m) => m,
        Err(e) => return Look::Failed(e),
    };
    let stamp = Stamp {
        mtime: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        size: meta.len(),
    };
    if last == Some(stamp) {
        return Look::Same;
    }
    let mut text = Vec::with_capacity(usize::try_from(stamp.size).unwrap_or(0));
    if let Err(e) = f.read_to_end(&mut text) {
        return Look::Failed(e);
    }
    let parsed = hostsfile::parse(&text, &options.zone_wires, options.reverse);
    Look::Read(stamp, parsed)
}

impl Inner {
    /// One look at the file from the reload thread: a changed file replaces the table; a
    /// deleted one leaves the inline entries only; an unreadable one changes nothing.
    fn check(&self, last: &Cell<Option<Stamp>>) {
        match read_file(&self.options.path, last.get(), &self.options) {
            Look::Same | Look::Failed(_) => {}
            Look::Missing => {
                if last.replace(None).is_some() {
                    self.data.store(Data::build(None, &self.inline));
                }
            }
            Look::Read(stamp, parsed) => {
                self.data.store(Data::build(Some(&parsed), &self.inline));
                last.set(Some(stamp));
                metrics::read_at(stamp.mtime);
            }
        }
    }
}

impl Plugin for Hosts {
    const NAME: &'static str = "hosts";
    type Config = Config;
    type Place = Serves;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Config, Error> {
        let options = setup::parse(d, block)?;
        let inline = hostsfile::parse(
            options.inline.join("\n").as_bytes(),
            &options.zone_wires,
            options.reverse,
        );
        let (file, stamp) = match read_file(&options.path, None, &options) {
            Look::Read(stamp, parsed) => {
                metrics::read_at(stamp.mtime);
                (Some(parsed), Some(stamp))
            }
            Look::Failed(e) => {
                ringdns_plugin::warning!(
                    "plugin/hosts: cannot read {}: {e}",
                    options.path.display()
                );
                (None, None)
            }
            Look::Same | Look::Missing => (None, None),
        };
        let data = Data::build(file.as_ref(), &inline);
        let inner = Arc::new(Inner {
            label: options.path.display().to_string(),
            options,
            inline,
            data: Snapshot::new(data),
        });
        metrics::register(&inner);
        let every = inner.options.reload;
        if !every.is_zero() {
            let last = Cell::new(stamp);
            poll_while("ringdns-hosts", every, &inner, move |i: &Inner| {
                i.check(&last)
            })
            .map_err(|e| {
                d.plugin_err(
                    Self::NAME,
                    format_args!("cannot start the reload thread: {e}"),
                )
            })?;
        }
        Ok(Config { inner })
    }
}

impl Serve for Hosts {
    fn build(config: &Arc<Config>, _core: &CoreInfo) -> Option<Self> {
        Some(Hosts {
            inner: config.inner.clone(),
        })
    }

    async fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Outcome {
        if let Some(status) = self.answer(req) {
            return Ok(status);
        }
        next_or_failure(Self::NAME, next, req).await
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        if let Some(status) = self.answer(req) {
            return Some(status);
        }
        next_or_failure_now(Self::NAME, next, req)
    }
}

/// The records of an answer: RDATA slices of the table.
enum Records<'d> {
    A(&'d [[u8; 4]]),
    Aaaa(&'d [[u8; 16]]),
    Ptr(&'d [Box<[u8]>]),
    None,
}

impl Records<'_> {
    fn is_empty(&self) -> bool {
        match self {
            Records::A(r) => r.is_empty(),
            Records::Aaaa(r) => r.is_empty(),
            Records::Ptr(r) => r.is_empty(),
            Records::None => true,
        }
    }
}

impl Hosts {
    /// The plugin's answer (or SERVFAIL); `None` when the query goes to the next plugin.
    /// Allocates nothing: the table is read in place and the reply written into the
    /// request's buffer.
    fn answer(&self, req: &mut Request<'_>) -> Option<Status> {
        let o = &self.inner.options;
        let qname: Name<'_> = req.query.qname();
        let qtype = req.query.qtype();
        if qtype != PTR && !o.zone_wires.iter().any(|z| qname.is_subdomain_of(z)) {
            return None;
        }
        let data = self.inner.data.load();
        let records = match qtype {
            PTR => {
                let names = reverse_addr(&qname).map_or(&[][..], |a| data.ptr(a));
                if names.is_empty() {
                    return None;
                }
                Records::Ptr(names)
            }
            A => Records::A(data.v4(&qname)),
            AAAA => Records::Aaaa(data.v6(&qname)),
            _ if o.fall_unsupported && o.fall.through(&qname) => return None,
            _ => Records::None,
        };
        if records.is_empty() && !data.exists(&qname) {
            if o.fall.through(&qname) {
                return None;
            }
            return Some(Status::rcode(SERVFAIL));
        }
        Some(write(req, &records, o.ttl))
    }
}

/// Writes the reply: NOERROR, AA, `records` owned by the question name. Records stop once
/// the reply is over the client's size (finalizing then cuts it to that size and sets TC),
/// or when no more fit in a message (TC set here).
fn write(req: &mut Request<'_>, records: &Records<'_>, ttl: u32) -> Status {
    let limit = req.max_reply_size();
    let mut w = MessageWriter::reply(&req.query, req.reply, NOERROR);
    w.set_aa(true);
    let push = |w: &mut MessageWriter<'_>, rtype: u16, rdata: &[u8]| {
        if w.len() > limit {
            return false;
        }
        let pushed = w.push(Section::Answer, Owner::Question, rtype, IN, ttl, rdata);
        if pushed.is_err() {
            w.set_tc(true);
        }
        pushed.is_ok()
    };
    match records {
        Records::A(r) => {
            for a in r.iter() {
                if !push(&mut w, A, a) {
                    break;
                }
            }
        }
        Records::Aaaa(r) => {
            for a in r.iter() {
                if !push(&mut w, AAAA, a) {
                    break;
                }
            }
        }
        Records::Ptr(r) => {
            for n in r.iter() {
                if !push(&mut w, PTR, n) {
                    break;
                }
            }
        }
        Records::None => {}
    }
    w.finish();
    req.finalize_reply();
    Status::written()
}

ringdns_plugin::export!(Hosts);

#[cfg(test)]
mod tests;
