//! The Corefile side of geoip: `geoip DBFILE [{ edns-subnet }]`, parsed as CoreDNS's
//! `plugin/geoip/setup.go` parses it, with its error texts.

use crate::{Config, NAME, db};
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::quote::go_quote;

/// Parses the block's `geoip` lines (one database per block) and opens the database.
pub fn parse(d: &mut Dispenser<'_>) -> Result<Config, Error> {
    let mut path: Option<String> = None;
    let mut edns_subnet = false;
    while d.next() {
        if !d.next_arg() {
            return Err(d.plugin_arg_err(NAME));
        }
        if path.is_some() {
            return Err(d.plugin_err(NAME, "configuring multiple databases is not supported"));
        }
        path = Some(d.val().to_string());
        // There shouldn't be any more arguments.
        if !d.remaining_args().is_empty() {
            return Err(d.plugin_arg_err(NAME));
        }
        while d.next_block() {
            if d.val() != "edns-subnet" {
                return Err(
                    d.plugin_err(NAME, format_args!("unknown property {}", go_quote(d.val())))
                );
            }
            edns_subnet = true;
        }
    }
    // `d.next()` found the directive at least once, so a path was read.
    let path = path.unwrap_or_default();
    let db = db::Database::open(&path).map_err(|e| d.plugin_err(NAME, e))?;
    Ok(Config { db, edns_subnet })
}
