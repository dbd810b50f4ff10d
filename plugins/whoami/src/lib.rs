//! whoami: answers every query with the client's address and port, as CoreDNS's whoami.

#![forbid(unsafe_code)]

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::wire::rcode::{NOERROR, SERVFAIL};
use ringdns_plugin::wire::rtype::{A, AAAA, SRV};
use ringdns_plugin::wire::{MessageWriter, Owner, Section};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, Request, Serve, Serves, Status,
};
use std::net::IpAddr;
use std::sync::Arc;

/// The whoami plugin; stateless.
pub struct Whoami;

impl Plugin for Whoami {
    const NAME: &'static str = "whoami";
    type Config = ();
    type Place = Serves;

    fn setup(d: &mut Dispenser<'_>, _block: &mut BlockSetup) -> Result<(), Error> {
        while d.next() {
            if d.next_arg() {
                return Err(d.arg_err());
            }
        }
        Ok(())
    }
}

impl Serve for Whoami {
    fn build(_config: &Arc<()>, _core: &CoreInfo) -> Option<Self> {
        Some(Whoami)
    }

    async fn serve<N: Handler>(&self, req: &mut Request<'_>, _next: &N) -> Outcome {
        Ok(answer(req))
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, _next: &N) -> Option<Status> {
        Some(answer(req))
    }
}

/// The reply: the client's address and port in the additional section.
fn answer(req: &mut Request<'_>) -> Status {
    let class = req.query.qclass();
    let port = req.client.port();
    let label: &[u8] = match req.proto {
        ringdns_plugin::Proto::Udp => b"_udp",
        ringdns_plugin::Proto::Tcp => b"_tcp",
    };
    let mut w = MessageWriter::reply(&req.query, req.reply, NOERROR);
    w.set_aa(true);
    // An IPv4-mapped IPv6 client is an IPv4 client.
    let addr = match req.client.ip().to_canonical() {
        IpAddr::V4(ip) => w.push(
            Section::Additional,
            Owner::Question,
            A,
            class,
            0,
            &ip.octets(),
        ),
        IpAddr::V6(ip) => w.push(
            Section::Additional,
            Owner::Question,
            AAAA,
            class,
            0,
            &ip.octets(),
        ),
    };
    // SRV: priority 0, weight 0, the client's port, target the root.
    let p = port.to_be_bytes();
    let srv = [0, 0, 0, 0, p[0], p[1], 0];
    let srv = w.push(
        Section::Additional,
        Owner::LabelThenQuestion(label),
        SRV,
        class,
        0,
        &srv,
    );
    w.finish();
    if addr.is_err() || srv.is_err() {
        req.reply.clear();
        return Status::rcode(SERVFAIL);
    }
    req.finalize_reply();
    Status::written()
}

ringdns_plugin::export!(Whoami);
