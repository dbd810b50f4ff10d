//! local: answers for the names that must not leave the host (RFC 6761's localhost names,
//! and the zones of the loopback and unspecified addresses), as CoreDNS's local plugin
//! (`plugin/local`), so that such queries never reach an upstream. Every other query goes on
//! untouched.
//!
//! [`names`] decides what a name gets; the reply is written from constants (the zones'
//! SOA, `localhost.`), so nothing is allocated.

#![forbid(unsafe_code)]

mod names;

use names::{LOCALHOST, Reply};
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::metrics::{Counter, Desc, Export, Kind, Sink, registry};
use ringdns_plugin::quote::go_quote;
use ringdns_plugin::wire::class::IN;
use ringdns_plugin::wire::rcode::{NOERROR, NXDOMAIN, SERVFAIL};
use ringdns_plugin::wire::rtype::{A, AAAA, NS, PTR, SOA};
use ringdns_plugin::wire::{HEADER_LEN, MessageWriter, Owner, Section, type_name};
use ringdns_plugin::{BlockSetup, CoreInfo, Plugin, Request, Screen, Screens, Status};
use std::sync::Arc;

/// The directive, for errors and logs.
const NAME: &str = "local";

/// The TTL of every record local answers with (CoreDNS's, a week).
const TTL: u32 = 604_800;

/// The zones' SOA: `localhost. root.localhost. 1 0 0 0 604800`.
const SOA_RDATA: &[u8] = b"\x09localhost\x00\x04root\x09localhost\x00\
    \x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x09\x3a\x80";

static LOCALHOST_REQUESTS: Desc = Desc {
    name: "coredns_local_localhost_requests_total",
    help: "Counter of special localhost subdomain requests.",
    kind: Kind::Counter,
    labels: &[],
};

/// One core's count of localhost names other than `localhost.` itself.
#[derive(Default)]
struct Requests(Counter);

impl Export for Requests {
    fn export(&self, _labels: &[String], _core: usize, out: &mut Sink) {
        out.counter(&LOCALHOST_REQUESTS, &[], self.0.get());
    }
}

/// What setup parsed.
#[derive(Debug)]
pub struct Config {
    /// `localhost_prefix on` (the default): `localhost.<domain>` names are localhost names.
    prefix: bool,
    /// The block has `debug`: each localhost name is logged.
    debug: bool,
}

/// The plugin's instance on one core.
pub struct Local {
    config: Arc<Config>,
    requests: Arc<Requests>,
}

impl Plugin for Local {
    const NAME: &'static str = NAME;
    type Config = Config;
    type Place = Screens;

    /// `local [{ localhost_prefix on|off }]`.
    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Config, Error> {
        let mut prefix = true;
        while d.next() {
            if d.next_arg() {
                return Err(d.plugin_arg_err(NAME));
            }
            while d.next_block() {
                match d.val() {
                    "localhost_prefix" => {
                        let args = d.remaining_args();
                        let [value] = args.as_slice() else {
                            return Err(d.plugin_arg_err(NAME));
                        };
                        prefix = match value.as_str() {
                            "on" => true,
                            "off" => false,
                            other => {
                                return Err(d.plugin_err(
                                    NAME,
                                    format!(
                                        "localhost_prefix expects 'on' or 'off', got {}",
                                        go_quote(other)
                                    ),
                                ));
                            }
                        };
                    }
                    other => {
                        return Err(d.plugin_err(NAME, format!("unknown property '{other}'")));
                    }
                }
            }
        }
        Ok(Config {
            prefix,
            debug: block.debug,
        })
    }
}

impl Screen for Local {
    fn build(config: &Arc<Config>, core: &CoreInfo) -> Option<Self> {
        Some(Local {
            config: config.clone(),
            requests: registry::cell(&[], core.index),
        })
    }

    fn screen(&self, req: &mut Request<'_>) -> Option<Status> {
        let qtype = req.query.qtype();
        let (reply, counted) = names::reply(&req.query.qname(), qtype, self.config.prefix)?;
        if counted {
            self.requests.0.inc();
            if self.config.debug {
                ringdns_plugin::logging::line(
                    "DEBUG",
                    format_args!(
                        "plugin/{NAME}: Intercepting localhost query for {} {}, from {}",
                        go_quote(&req.query.qname().lowercase().to_string()),
                        type_name(qtype),
                        req.client.ip()
                    ),
                );
            }
        }
        Some(answer(req, reply))
    }
}

/// Writes `reply`: no AA (CoreDNS's `SetReply` only), every record of class IN.
fn answer(req: &mut Request<'_>, reply: Reply) -> Status {
    let qtype = req.query.qtype();
    let rcode = if matches!(reply, Reply::NxDomain(_)) {
        NXDOMAIN
    } else {
        NOERROR
    };
    let mut w = MessageWriter::reply(&req.query, req.reply, rcode);
    let mut record =
        |section, owner, rtype, rdata: &[u8]| w.push(section, owner, rtype, IN, TTL, rdata);
    let suffix = |at: usize| Owner::Pointer((HEADER_LEN + at) as u16);
    let pushed = match reply {
        Reply::Address if qtype == AAAA => record(
            Section::Answer,
            Owner::Question,
            AAAA,
            &std::net::Ipv6Addr::LOCALHOST.octets(),
        ),
        Reply::Address => record(Section::Answer, Owner::Question, A, &[127, 0, 0, 1]),
        Reply::Soa => record(Section::Answer, Owner::Question, SOA, SOA_RDATA),
        Reply::Ns => record(Section::Answer, Owner::Question, NS, LOCALHOST),
        Reply::Ptr => record(Section::Answer, Owner::Question, PTR, LOCALHOST),
        Reply::NoData(at) | Reply::NxDomain(at) => {
            record(Section::Authority, suffix(at), SOA, SOA_RDATA)
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

ringdns_plugin::export!(Local);

#[cfg(test)]
mod tests;
