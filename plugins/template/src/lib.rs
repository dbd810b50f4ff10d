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
//! Everything is decided and written on the first pass (`serve_now`), but for an A or
//! AAAA answer that holds a CNAME: its target is looked up through the server on the
//! deferred pass ([`follow`]), as CoreDNS's `upstream`. A query that no template answers
//! allocates nothing here; an answer allocates (the rendered text, the records).

#![forbid(unsafe_code)]

mod lang;
mod metrics;
mod setup;

use lang::{Data, Msg};
use metrics::{Counters, Failure, Labels};
use regex::Regex;
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::lookup::append_answers;
use ringdns_plugin::name_text::NameText;
use ringdns_plugin::wire::rcode::SERVFAIL;
use ringdns_plugin::wire::{
    Header, MessageWriter, Name, Owner, QueryBuilder, Section, edns, rtype,
};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, PluginError, Request, Serve, ServeFuture,
    Serves, Status, client_write, next_or_failure, next_or_failure_now,
};
use ringdns_zone::Record;
use setup::{Config, Part, Tmpl, class_str, type_str};
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
            counters: Counters::new(core.index, &config.view),
        })
    }

    // Not an `async fn`: only the rare answer that follows a CNAME waits, boxed.
    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        match self.answer(req) {
            Step::Done(status) => ServeFuture::ready(Ok(status)),
            Step::Next => ServeFuture::Next {
                fut: next_or_failure(Self::NAME, next, req),
            },
            Step::Defer => ServeFuture::ready(req.defer()),
            Step::Follow(rendered) => ServeFuture::Own {
                fut: Box::pin(follow(req, rendered)),
            },
        }
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        match self.answer(req) {
            Step::Done(status) => Some(status),
            Step::Next => next_or_failure_now(Self::NAME, next, req),
            // The CNAME's target is looked up on the deferred pass.
            Step::Defer | Step::Follow(_) => {
                req.clear_reply();
                None
            }
        }
    }
}

/// What the templates make of a query.
enum Step<'c> {
    /// No template answers: the next plugin's.
    Next,
    /// Answered, or an rcode for the server to write.
    Done(Status),
    /// The answer holds a CNAME for an A or AAAA query, and this pass may not wait.
    Defer,
    /// The same, on a pass that may: the rendered records, whose CNAME targets are looked
    /// up through the server.
    Follow(Rendered<'c>),
}

/// A template's records, rendered and read, before they are written.
struct Rendered<'c> {
    template: &'c Tmpl,
    records: Vec<(Part, Record)>,
}

/// Looks up the target of each CNAME of the answer through the server (another block,
/// *hosts*, *forward*…) for the query's type, as CoreDNS's template does, then writes the
/// reply with what came back after each CNAME.
async fn follow(req: &mut Request<'_>, r: Rendered<'_>) -> Status {
    let q = req.query;
    let mut ups = Vec::new();
    for (_, rec) in r
        .records
        .iter()
        .filter(|(p, rec)| *p == Part::Answer && rec.rtype == rtype::CNAME)
    {
        let reply = match (req.lookup(), Name::from_wire(&rec.rdata)) {
            (Some(via), Ok(target)) => {
                let query = QueryBuilder::new(target, q.qtype())
                    .id(q.id())
                    .rd(true)
                    .build();
                via.lookup(&query).await
            }
            _ => None,
        };
        ups.push(reply);
    }
    write(req, r.template, &r.records, &ups)
}

impl TemplatePlugin {
    /// The templates' answer (or SERVFAIL), or the next plugin's.
    fn answer(&self, req: &mut Request<'_>) -> Step<'_> {
        let qname = req.query.qname();
        if !self.config.zones.iter().any(|z| qname.is_subdomain_of(z)) {
            return Step::Next;
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
                return self.render(req, t, &zone.0, name.as_str(), re);
            }
            if !t.fall.through(&qname) {
                return Step::Done(Status::rcode(SERVFAIL));
            }
        }
        Step::Next
    }

    /// Answers `req` with template `t`, whose regex `re` matched `name` in `zone`. The
    /// match is counted on the pass that answers (not on one that defers).
    fn render<'c>(
        &self,
        req: &mut Request<'_>,
        t: &'c Tmpl,
        zone: &str,
        name: &str,
        re: &Regex,
    ) -> Step<'c> {
        let q = req.query;
        let Some(caps) = re.captures(name) else {
            return Step::Done(Status::rcode(SERVFAIL));
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
            meta: req.metadata(),
        };
        let labels = Labels {
            server: req.server,
            zone,
        };
        let matched = || self.counters.matched(&labels, class, rtype);
        if t.rcode == SERVFAIL {
            matched();
            return Step::Done(Status::rcode(SERVFAIL));
        }
        let fail = |msg: String| {
            matched();
            Step::Done(Status::error(SERVFAIL, PluginError::new(Self::NAME, msg)))
        };
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
        let follows = matches!(q.qtype(), rtype::A | rtype::AAAA)
            && records
                .iter()
                .any(|(p, r)| *p == Part::Answer && r.rtype == rtype::CNAME);
        if follows && !req.can_wait() {
            return Step::Defer;
        }
        matched();
        if follows {
            return Step::Follow(Rendered {
                template: t,
                records,
            });
        }
        Step::Done(write(req, t, &records, &[]))
    }
}

/// Writes the reply of template `t` from its `records`; `ups[i]`, the reply of the lookup
/// of the `i`th CNAME of the answer, has its answers appended after that CNAME (and its TC
/// bit carried over), as CoreDNS appends them.
fn write(
    req: &mut Request<'_>,
    t: &Tmpl,
    records: &[(Part, Record)],
    ups: &[Option<Vec<u8>>],
) -> Status {
    let q = req.query;
    let fail = |msg: String| Status::error(SERVFAIL, PluginError::new(TemplatePlugin::NAME, msg));
    let mut cnames = ups.iter();
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
            if part != Part::Answer || r.rtype != rtype::CNAME {
                continue;
            }
            if let Some(Some(up)) = cnames.next() {
                append_answers(up, &mut w);
                if Header::of(up).is_some_and(|h| h.tc()) {
                    w.set_tc(true);
                }
            }
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

ringdns_plugin::export!(TemplatePlugin);

#[cfg(test)]
mod tests;
