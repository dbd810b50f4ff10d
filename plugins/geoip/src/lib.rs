//! geoip: looks the client's address up in an `.mmdb` (MaxMind DB) database and publishes
//! what it finds (city, country, continent, location, network) as metadata, as CoreDNS's
//! `plugin/geoip`.
//!
//! The address is the client's, or with `edns-subnet` the one of the query's EDNS Client
//! Subnet option when it has one. A City, Country or Enterprise database gives the
//! location labels, an ASN or ISP database the `asn` labels; which, the database's type
//! decides, as CoreDNS's geoip2 reader decides it. Nothing is looked up for a query that
//! carries no metadata store (a block without *metadata*, or a name outside its zones).

#![forbid(unsafe_code)]

mod db;
mod record;
mod setup;
mod subnet;

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::{BlockSetup, CoreInfo, Handler, Plugin, Request, Screen, Screens, Status};
use std::net::IpAddr;
use std::sync::Arc;

/// The directive, for errors.
const NAME: &str = "geoip";

/// What setup parsed: the opened database and whether the EDNS Client Subnet is used.
pub struct Config {
    db: db::Database,
    edns_subnet: bool,
}

/// A core's geoip plugin: the block's database, shared by every core. A screen (it only
/// publishes and hands the query on, on every pass, the same labels each time), so that its
/// slot adds nothing to the chain's future.
pub struct GeoIp {
    config: Arc<Config>,
}

impl Plugin for GeoIp {
    const NAME: &'static str = NAME;
    type Config = Config;
    type Place = Screens;

    /// `geoip DBFILE [{ edns-subnet }]`, once per block (CoreDNS's words for a second).
    fn setup(d: &mut Dispenser<'_>, _block: &mut BlockSetup) -> Result<Config, Error> {
        setup::parse(d)
    }
}

impl GeoIp {
    /// Looks the query's address up and publishes the labels the database provides. A
    /// no-op, with no lookup, for a request without a metadata store; self-contained, so
    /// that a hook which runs before routing (the view plugin's) can call it too.
    pub fn publish(&self, req: &mut Request<'_>) {
        let Some(meta) = req.metadata() else {
            return;
        };
        let ip = self.address(req);
        self.config.db.publish(ip, meta);
    }

    /// CoreDNS's source: the client's address, or with `edns-subnet` the address of the
    /// query's first EDNS Client Subnet option when it has one.
    fn address(&self, req: &Request<'_>) -> IpAddr {
        if self.config.edns_subnet
            && let Some(ip) = subnet::address(&req.query)
        {
            return ip;
        }
        // A client on an IPv4-mapped address of a dual-stack socket is the IPv4 it is.
        req.client.ip().to_canonical()
    }
}

impl Screen for GeoIp {
    fn build(config: &Arc<Config>, _core: &CoreInfo) -> Option<Self> {
        Some(GeoIp {
            config: config.clone(),
        })
    }

    /// Publishes, then hands the query on (`None`; the chain fails it as CoreDNS's
    /// `NextOrFailure` when nothing follows).
    fn screen(&self, req: &mut Request<'_>) -> Option<Status> {
        self.publish(req);
        None
    }

    /// Publishes before the server chooses among a zone's blocks, for view's
    /// `metadata('geoip/…')`.
    fn admits<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> bool {
        self.publish(req);
        next.admits(req)
    }
}

ringdns_plugin::export!(GeoIp);

#[cfg(test)]
mod tests;
