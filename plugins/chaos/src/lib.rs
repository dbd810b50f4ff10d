//! chaos: answers the CH-class TXT queries that name a server (`version.bind`,
//! `version.server`, `authors.bind`, `hostname.bind`, `id.server`), as CoreDNS's chaos
//! plugin (`plugin/chaos`); every other query goes on untouched. Its setup opens the block's
//! listeners to CH-class queries, which the server refuses otherwise.
//!
//! The answers' RDATA is encoded at setup (the host name read then), so an answer is
//! copied into the reply buffer: nothing is allocated.

#![forbid(unsafe_code)]

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::wire::class::CH;
use ringdns_plugin::wire::rcode::{NOERROR, SERVFAIL};
use ringdns_plugin::wire::rtype::TXT;
use ringdns_plugin::wire::{MessageWriter, Owner, Section};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Plugin, Request, Screen, Screens, Status, once_per_block_of,
};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::sync::Arc;

/// The directive, for errors.
const NAME: &str = "chaos";

/// The names answered, lower-case wire form, with what each is answered with.
const NAMES: [(&[u8], Answer); 5] = [
    (b"\x07version\x04bind\x00", Answer::Version),
    (b"\x07version\x06server\x00", Answer::Version),
    (b"\x07authors\x04bind\x00", Answer::Authors),
    (b"\x08hostname\x04bind\x00", Answer::Hostname),
    (b"\x02id\x06server\x00", Answer::Hostname),
];

/// What a name is answered with.
#[derive(Clone, Copy)]
enum Answer {
    Version,
    Authors,
    Hostname,
}

/// The version answered when the Corefile gives none: the server's own name and version,
/// as CoreDNS answers `CoreDNS-<version>`.
const DEFAULT_VERSION: &str = concat!("ringdns-", env!("CARGO_PKG_VERSION"));

/// What setup parsed, as TXT RDATA (one character-string each).
pub struct Config {
    version: Vec<u8>,
    authors: Vec<Vec<u8>>,
    hostname: Vec<u8>,
}

/// The plugin's instance on one core: the answers and the core's shuffle of the authors.
pub struct Chaos {
    config: Arc<Config>,
    shuffle: RefCell<Shuffle>,
}

/// The order authors.bind's records go in, drawn anew for each answer.
struct Shuffle {
    rng: fastrand::Rng,
    order: Vec<usize>,
}

/// One TXT character-string: its length, then at most 255 of its bytes (CoreDNS's `trim`).
fn txt(s: &str) -> Vec<u8> {
    let b = &s.as_bytes()[..s.len().min(255)];
    let mut out = Vec::with_capacity(b.len() + 1);
    out.push(b.len() as u8);
    out.extend_from_slice(b);
    out
}

/// The authors when the Corefile names none: the package's (`authors` in Cargo.toml).
fn default_authors() -> Vec<Vec<u8>> {
    env!("CARGO_PKG_AUTHORS")
        .split(':')
        .filter(|a| !a.is_empty())
        .map(txt)
        .collect()
}

impl Plugin for Chaos {
    const NAME: &'static str = NAME;
    type Config = Config;
    type Place = Screens;

    /// `chaos [VERSION] [AUTHORS...]`, once per block, without a block of options. Several
    /// authors are answered sorted and without duplicates, as CoreDNS parses them.
    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Config, Error> {
        let mut config = Config {
            version: txt(DEFAULT_VERSION),
            authors: default_authors(),
            hostname: txt(&ringdns_plugin::hostname::hostname()),
        };
        let mut seen = false;
        while d.next() {
            once_per_block_of(d, NAME, &mut seen)?;
            let args = d.remaining_args();
            if let Some((version, authors)) = args.split_first() {
                config.version = txt(version);
                if !authors.is_empty() {
                    let set: BTreeSet<&[u8]> = authors
                        .iter()
                        .map(|a| &a.as_bytes()[..a.len().min(255)])
                        .collect();
                    config.authors = set
                        .into_iter()
                        .map(|a| {
                            let mut t = vec![a.len() as u8];
                            t.extend_from_slice(a);
                            t
                        })
                        .collect();
                }
            }
            if d.next_block() {
                return Err(d.plugin_err(NAME, format!("unknown property '{}'", d.val())));
            }
        }
        // CoreDNS opens a server to CH-class queries when one of its blocks has chaos.
        block.allow_chaos = true;
        Ok(config)
    }
}

impl Screen for Chaos {
    fn build(config: &Arc<Config>, _core: &CoreInfo) -> Option<Self> {
        Some(Chaos {
            config: config.clone(),
            shuffle: RefCell::new(Shuffle {
                rng: fastrand::Rng::new(),
                order: (0..config.authors.len()).collect(),
            }),
        })
    }

    fn screen(&self, req: &mut Request<'_>) -> Option<Status> {
        let q = &req.query;
        if q.qclass() != CH || q.qtype() != TXT {
            return None;
        }
        let qname = q.qname();
        let (_, answer) = NAMES.iter().find(|(n, _)| qname.eq_lowercase(n))?;
        Some(self.answer(req, *answer))
    }
}

impl Chaos {
    /// The reply: NOERROR, TXT records of class CH with TTL 0 owned by the question name.
    fn answer(&self, req: &mut Request<'_>, answer: Answer) -> Status {
        let c = &*self.config;
        let mut w = MessageWriter::reply(&req.query, req.reply, NOERROR);
        let mut push = |rdata: &[u8]| w.push(Section::Answer, Owner::Question, TXT, CH, 0, rdata);
        let pushed = match answer {
            Answer::Version => push(&c.version),
            Answer::Hostname => push(&c.hostname),
            Answer::Authors => {
                let mut s = self.shuffle.borrow_mut();
                let Shuffle { rng, order } = &mut *s;
                rng.shuffle(order);
                order.iter().try_for_each(|&i| push(&c.authors[i]))
            }
        };
        w.finish();
        if pushed.is_err() {
            req.reply.clear();
            return Status::rcode(SERVFAIL);
        }
        req.finalize_reply();
        Status::written()
    }
}

ringdns_plugin::export!(Chaos);

#[cfg(test)]
mod tests;
