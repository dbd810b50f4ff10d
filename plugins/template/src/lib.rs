//! template: answers built from templates of the query, as CoreDNS's template plugin
//! (`plugin/template`).
//!
//! Setup (`setup.rs`) parses every `template` of a block into one handler, as CoreDNS
//! does: its templates in order, each with its zones, class, type, regexes and record
//! templates, written in the subset of Go's text/template that `lang` implements. A query
//! then goes, as CoreDNS's `ServeDNS` decides:
//!
//! - a name under none of the templates' zones: to the next plugin;
//! - for each template in order: a name outside its zones, or a class or type it does not
//!   take (ANY on either side matches), goes on to the next template; the first regex that
//!   matches the lower-cased name answers; when none matches, the query goes on to the
//!   next template if `fallthrough` covers the name, else it is SERVFAIL;
//! - no template answered: the next plugin.
//!
//! An answer is counted (`metrics.rs`), then rendered: each record template executed and
//! read as one zone-file record (relative names under the root, TTL 3600 when none is
//! given, as miekg's `NewRR`), written with AA set and the template's rcode, with an
//! extended DNS error (RFC 8914) in an OPT record when `ederror` says so. A template
//! whose rcode is SERVFAIL answers nothing: the server writes the SERVFAIL. A rendering
//! that fails is SERVFAIL with the error, for the *errors* plugin to log.
//!
//! Everything is decided and written on the first pass (`serve_now`): a template never
//! waits. A query that no template answers allocates nothing here; an answer allocates
//! (the rendered text, the records).

#![forbid(unsafe_code)]

mod lang;
mod metrics;
mod setup;

use lang::{Data, Msg};
use metrics::{Counters, Failure, Labels};
use regex::Regex;
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::wire::rcode::SERVFAIL;
use ringdns_plugin::wire::{MessageWriter, Name, Owner, Section, edns};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, PluginError, Request, Serve, ServeFuture,
    Serves, Status, client_write, next_or_failure, next_or_failure_now,
};
use setup::{Config, Part, Tmpl, class_str, type_str};
use std::fmt;
use std::future::Future;
use std::sync::Arc;

/// The template plugin's instance on one core: the block's templates and this core's
/// counters.
pub struct TemplatePlugin {
    config: Arc<Config>,
    counters: Counters,
}

impl Plugin for TemplatePlugin {
    const NAME: &'static str = "template";
    type Config = Config;
    type Place = Serves;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Config, Error> {
        setup::parse(d, block)
    }
}

impl Serve for TemplatePlugin {
    fn build(config: &Arc<Config>, core: &CoreInfo) -> Option<Self> {
        Some(TemplatePlugin {
            config: config.clone(),
            counters: Counters::new(core.index),
        })
    }

    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        match self.answer(req) {
            Some(status) => ServeFuture::<_, std::future::Ready<Status>>::ready(Ok(status)),
            None => ServeFuture::Next {
                fut: next_or_failure(Self::NAME, next, req),
            },
        }
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        match self.answer(req) {
            Some(status) => Some(status),
            None => next_or_failure_now(Self::NAME, next, req),
        }
    }
}

/// The longest presentation form of a name: 255 wire bytes, each at most `\DDD`.
const NAME_TEXT: usize = 1024;

/// A name's presentation form on the stack, so that looking at a query costs no
/// allocation.
struct NameText {
    buf: [u8; NAME_TEXT],
    len: usize,
}

impl fmt::Write for NameText {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let Some(dst) = self.buf.get_mut(self.len..end) else {
            return Err(fmt::Error);
        };
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

impl NameText {
    /// `name` lower-cased (CoreDNS's `state.Name()`).
    fn of(name: &Name<'_>) -> Self {
        let mut t = NameText {
            buf: [0; NAME_TEXT],
            len: 0,
        };
        if name.write_lowercase(&mut t).is_err() {
            t.len = 0;
        }
        t
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

impl TemplatePlugin {
    /// The templates' answer (or SERVFAIL); `None` when the query goes to the next plugin.
    fn answer(&self, req: &mut Request<'_>) -> Option<Status> {
        let qname = req.query.qname();
        if !self.config.zones.iter().any(|z| qname.is_subdomain_of(z)) {
            return None;
        }
        let (qclass, qtype) = (req.query.qclass(), req.query.qtype());
        let mut text: Option<NameText> = None;
        for t in &self.config.templates {
            // CoreDNS's `plugin.Zones.Matches`: the longest of the template's zones.
            let Some(zone) = t
                .zones
                .iter()
                .filter(|(_, w)| qname.is_subdomain_of(w))
                .max_by_key(|(_, w)| w.len())
            else {
                continue;
            };
            if t.qclass != 255 && qclass != 255 && qclass != t.qclass {
                continue;
            }
            if t.qtype != 255 && qtype != 255 && qtype != t.qtype {
                continue;
            }
            let name = text.get_or_insert_with(|| NameText::of(&qname));
            if let Some(re) = t.regex.iter().find(|re| re.is_match(name.as_str())) {
                return Some(self.render(req, t, &zone.0, name.as_str(), re));
            }
            if !t.fall.through(&qname) {
                return Some(Status::rcode(SERVFAIL));
            }
        }
        None
    }

    /// Answers `req` with template `t`, whose regex `re` matched `name` in `zone`.
    fn render(
        &self,
        req: &mut Request<'_>,
        t: &Tmpl,
        zone: &str,
        name: &str,
        re: &Regex,
    ) -> Status {
        let q = req.query;
        let Some(caps) = re.captures(name) else {
            return Status::rcode(SERVFAIL);
        };
        let matches: Vec<&str> = (0..caps.len())
            .map(|i| caps.get(i).map_or("", |m| m.as_str()))
            .collect();
        let group_names: Vec<Option<&str>> = re.capture_names().collect();
        // For a query of class or type ANY, the template's.
        let class = class_str(if q.qclass() != 255 {
            q.qclass()
        } else {
            t.qclass
        });
        let rtype = type_str(if q.qtype() != 255 { q.qtype() } else { t.qtype });
        let remote = req.client.ip().to_canonical().to_string();
        let qname = q.qname().to_string();
        let data = Data {
            zone,
            name,
            regex: re.as_str(),
            matches: &matches,
            group_names: &group_names,
            class,
            rtype,
            remote: &remote,
            msg: Msg {
                id: q.id(),
                flags: q.flags(),
                qname: &qname,
                qtype: q.qtype(),
                qclass: q.qclass(),
            },
        };
        let labels = Labels {
            server: req.server,
            zone,
        };
        self.counters.matched(&labels, class, rtype);
        if t.rcode == SERVFAIL {
            return Status::rcode(SERVFAIL);
        }
        let fail = |msg: String| Status::error(SERVFAIL, PluginError::new(Self::NAME, msg));
        let mut records = Vec::with_capacity(t.rrs.len());
        let mut text = String::new();
        for rr in &t.rrs {
            text.clear();
            let section = rr.part.name();
            if let Err(e) = rr.template.execute(&data, &mut text) {
                let what = Failure::Template;
                self.counters
                    .failed(what, &labels, (class, rtype), section, &rr.label);
                return fail(e);
            }
            match ringdns_zone::parse::parse_rr(&text, &[0], 3600) {
                Ok(r) => records.push((rr.part, r)),
                Err(e) => {
                    self.counters
                        .failed(Failure::Rr, &labels, (class, rtype), section, &rr.label);
                    return fail(format!("dns: {e}: {text:?}"));
                }
            }
        }
        let mut w = MessageWriter::reply(&q, req.reply, t.rcode);
        w.set_aa(true);
        let mut pushed = Ok(());
        for (section, part) in [
            (Section::Answer, Part::Answer),
            (Section::Authority, Part::Authority),
            (Section::Additional, Part::Additional),
        ] {
            for (_, r) in records.iter().filter(|(p, _)| *p == part) {
                pushed = pushed.and_then(|()| {
                    w.push(
                        section,
                        Owner::Wire(&r.owner),
                        r.rtype,
                        r.class,
                        r.ttl,
                        &r.rdata,
                    )
                });
            }
        }
        if let Some((code, reason)) = &t.ede {
            let mut ede = code.to_be_bytes().to_vec();
            ede.extend_from_slice(reason.as_bytes());
            // miekg's `SetEdns0(4096, true)`, then the option.
            pushed = pushed.and_then(|()| w.push_opt(4096, true, &[(edns::EDE, &ede)]));
        }
        w.finish();
        if let Err(e) = pushed {
            req.reply.clear();
            return fail(format!("cannot write the reply: {e}"));
        }
        req.finalize_reply();
        // CoreDNS writes the reply whatever its rcode; a REFUSED (or other error rcode)
        // written this way is sent as written, not replaced by the server's own.
        if client_write(t.rcode) {
            Status::rcode(t.rcode)
        } else {
            Status::written()
        }
    }
}

ringdns_plugin::export!(TemplatePlugin);

#[cfg(test)]
mod tests;
