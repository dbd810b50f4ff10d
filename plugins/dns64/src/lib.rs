//! dns64: answers an AAAA query for which the rest of the chain has no AAAA records with
//! AAAA records synthesised from the name's A records and a NAT64 prefix (RFC 6147), as
//! CoreDNS's `plugin/dns64`, for IPv6-only clients behind NAT64.
//!
//! A query it does not intercept (not AAAA/IN, or from an IPv4 client without
//! `allow_ipv4`) goes on untouched. One it does waits where it may (the deferred pass):
//! after the rest's reply it may have to look up the name's A records through the server.

#![forbid(unsafe_code)]

mod metrics;
mod synth;

use metrics::Counters;
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::wire::rcode::{NXDOMAIN, SERVFAIL};
use ringdns_plugin::wire::{QueryBuilder, class, header_rcode, rtype};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, PluginError, Request, Serve, ServeFuture,
    Serves, Status, client_write, next_or_failure, next_or_failure_now,
};
use std::future::Future;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::Arc;

/// The directive, for errors.
const NAME: &str = "dns64";

/// What setup parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The NAT64 prefix (its first `len / 8` bytes are used).
    prefix: Ipv6Addr,
    /// Its length: 32, 40, 48, 56, 64 or 96 (RFC 6052 §2.2).
    len: u8,
    /// Synthesise even when the rest has AAAA records (not RFC 6147 §5.1.1).
    translate_all: bool,
    /// Intercept queries from IPv4 clients too.
    allow_ipv4: bool,
}

/// The plugin's instance on one core.
pub struct Dns64 {
    config: Arc<Config>,
    counters: Counters,
}

impl Plugin for Dns64 {
    const NAME: &'static str = NAME;
    type Config = Config;
    type Place = Serves;

    /// `dns64 [PREFIX] { prefix PREFIX; translate_all; allow_ipv4 }`, CoreDNS's parse:
    /// every line of the block is read, a later prefix wins.
    fn setup(d: &mut Dispenser<'_>, _block: &mut BlockSetup) -> Result<Config, Error> {
        let mut c = Config {
            prefix: Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0),
            len: 96,
            translate_all: false,
            allow_ipv4: false,
        };
        while d.next() {
            let args = d.remaining_args();
            match args.as_slice() {
                [p] => {
                    (c.prefix, c.len) = prefix(p).map_err(|e| d.plugin_err(NAME, e))?;
                    continue;
                }
                [] => {}
                _ => return Err(d.plugin_arg_err(NAME)),
            }
            while d.next_block() {
                match d.val() {
                    "prefix" => {
                        if !d.next_arg() {
                            return Err(d.plugin_arg_err(NAME));
                        }
                        let p = d.val().to_string();
                        (c.prefix, c.len) = prefix(&p).map_err(|e| d.plugin_err(NAME, e))?;
                    }
                    "translate_all" => c.translate_all = true,
                    "allow_ipv4" => c.allow_ipv4 = true,
                    other => {
                        let msg = format!("unknown property '{other}'");
                        return Err(d.plugin_err(NAME, msg));
                    }
                }
            }
        }
        Ok(c)
    }
}

/// CoreDNS's `parsePrefix`: an IPv6 CIDR whose length is a multiple of 8 from 32 to 96.
fn prefix(s: &str) -> Result<(Ipv6Addr, u8), String> {
    let bad = || format!("invalid CIDR address: {s}");
    let (addr, len) = s.split_once('/').ok_or_else(bad)?;
    let ip: IpAddr = addr.parse().map_err(|_| bad())?;
    let len: u8 = len.parse().map_err(|_| bad())?;
    let IpAddr::V6(ip) = ip else {
        return Err(format!("invalid netmask 32 IPv6 address: \"{s}\""));
    };
    if len > 128 {
        return Err(bad());
    }
    let masked = u128::from(ip) & (!0u128).checked_shl(128 - u32::from(len)).unwrap_or(0);
    let net = Ipv6Addr::from(masked);
    if !len.is_multiple_of(8) || !(32..=96).contains(&len) {
        return Err(format!("invalid prefix length \"{net}/{len}\""));
    }
    Ok((net, len))
}

impl Serve for Dns64 {
    fn build(config: &Arc<Config>, core: &CoreInfo) -> Option<Self> {
        Some(Dns64 {
            config: config.clone(),
            counters: Counters::new(core.index),
        })
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        if self.intercepts(req) {
            return None;
        }
        next_or_failure_now(NAME, next, req)
    }

    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        if !self.intercepts(req) {
            return ServeFuture::Next {
                fut: next_or_failure(NAME, next, req),
            };
        }
        if !req.can_wait() {
            return ServeFuture::ready(req.defer());
        }
        ServeFuture::Own {
            fut: Box::pin(self.translate(req, next)),
        }
    }
}

impl Dns64 {
    /// CoreDNS's `requestShouldIntercept`: an AAAA/IN query from an IPv6 client (or any
    /// client with `allow_ipv4`). An IPv4-mapped address is an IPv4 client, as Go sees it.
    fn intercepts(&self, req: &Request<'_>) -> bool {
        let v4 = match req.client.ip() {
            IpAddr::V4(_) => true,
            IpAddr::V6(a) => a.to_ipv4_mapped().is_some(),
        };
        (self.config.allow_ipv4 || !v4)
            && req.query.qtype() == rtype::AAAA
            && req.query.qclass() == class::IN
    }

    /// The rest's reply, or the AAAA records synthesised from the name's A records when it
    /// has none to give (CoreDNS's `ServeDNS` with `DoDNS64`).
    async fn translate<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Status {
        let status = match next_or_failure(NAME, next, req).await {
            Ok(s) => s,
            Err(_) => return Status::deferred_on_wait(NAME),
        };
        if !client_write(status.rcode)
            || req.reply.is_empty()
            || !synth::wants_synthesis(req.reply, self.config.translate_all)
        {
            return status;
        }
        let q = req.query;
        let query = QueryBuilder::new(q.qname(), rtype::A)
            .id(q.id())
            .rd(q.rd())
            .build();
        let Some(a) = (match req.lookup() {
            Some(via) => via.lookup(&query).await,
            None => None,
        }) else {
            return Status::error(
                SERVFAIL,
                PluginError::new(NAME, "no reply to the lookup of the A records"),
            );
        };
        let soa_ttl = synth::soa_ttl(req.reply);
        if !synth::write(req, &a, soa_ttl, &self.config) {
            return Status::error(
                SERVFAIL,
                PluginError::new(NAME, "the A records' reply does not parse"),
            );
        }
        self.counters.translated(req.server);
        Status {
            rcode: header_rcode(req.reply).unwrap_or(0),
            error: None,
        }
    }
}

/// An NXDOMAIN is final (RFC 6147 §5.1.2): the name has no records of any type.
const fn final_rcode(rcode: u8) -> bool {
    rcode == NXDOMAIN
}

ringdns_plugin::export!(Dns64);

#[cfg(test)]
mod tests;
