//! Parsing of the `k8s_external` directive as CoreDNS's `plugin/k8s_external/setup.go`
//! parses it: the same options, defaults, checks and error texts (each prefixed
//! `plugin/k8s_external: `).
//!
//! ```text
//! k8s_external [ZONES...] {
//!     apex APEX
//!     ttl TTL
//!     headless
//!     fallthrough [ZONES...]
//! }
//! ```
//!
//! CoreDNS looks the kubernetes plugin up when the server starts, and fails the start
//! without it; here setup fails, at the directive's line, when the block has no
//! `kubernetes` directive. The kubernetes plugin's setup runs after this one (plugin.cfg
//! order) and registers its answers in the block's [`Externalers`], which the per-core
//! instances read when they are built.

use crate::answer::HOSTMASTER;
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::duration::go_atoi;
use ringdns_plugin::external::Externalers;
use ringdns_plugin::normalize::origins_from_args_or_block;
use ringdns_plugin::wire::{Name, name_to_wire};
use ringdns_plugin::{BlockSetup, Fallthrough};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// The directive.
pub const NAME: &str = "k8s_external";
/// The plugin whose answers k8s_external serves.
pub const SOURCE: &str = "kubernetes";
/// CoreDNS's default TTL.
pub const DEFAULT_TTL: u32 = 5;
/// CoreDNS's default apex label.
pub const DEFAULT_APEX: &str = "dns";

/// What the directive says, and where the kubernetes plugin's answers will be.
pub struct Config {
    /// The zones, lower-case wire names, in order (the first names PTR targets).
    pub zones: Vec<Vec<u8>>,
    /// `apex`: the labels of the name servers' subdomain, lower-case wire without the
    /// root (`\x03dns`).
    pub apex: Vec<u8>,
    /// How many labels `apex` has.
    pub apex_labels: usize,
    /// `APEX.ZONE` for each zone, wire: the subdomain of the name servers.
    pub apex_zones: Vec<Vec<u8>>,
    /// `ttl`.
    pub ttl: u32,
    /// `headless`.
    pub headless: bool,
    /// `fallthrough [ZONES...]`.
    pub fall: Fallthrough,
    /// The block's registry, which the kubernetes plugin fills in its setup.
    pub externalers: Arc<Externalers>,
    /// Whether a missing registration was logged (once per configuration).
    pub reported: AtomicBool,
}

fn fail(d: &Dispenser<'_>, msg: impl std::fmt::Display) -> Error {
    d.plugin_err(NAME, msg)
}

/// Parses every `k8s_external` of a block; like CoreDNS, a later one replaces the zones
/// and adds its options to the earlier one's.
pub fn parse(d: &mut Dispenser<'_>, block: &BlockSetup) -> Result<Config, Error> {
    let mut zones = Vec::new();
    let mut apex = DEFAULT_APEX.to_string();
    let mut ttl = DEFAULT_TTL;
    let mut headless = false;
    let mut fall = Fallthrough::default();
    let mut line = None;
    while d.next() {
        line.get_or_insert(d.line());
        let args = d.remaining_args();
        zones = origins_from_args_or_block(NAME, &args, &block.zones);
        while d.next_block() {
            match d.val() {
                "ttl" => {
                    let args = d.remaining_args();
                    let Some(arg) = args.first() else {
                        return Err(d.plugin_arg_err(NAME));
                    };
                    let t = go_atoi(arg).map_err(|e| fail(d, e))?;
                    if !(0..=3600).contains(&t) {
                        return Err(fail(d, format_args!("ttl must be in range [0, 3600]: {t}")));
                    }
                    ttl = t as u32;
                }
                "apex" => {
                    let args = d.remaining_args();
                    let Some(arg) = args.first() else {
                        return Err(d.plugin_arg_err(NAME));
                    };
                    apex = arg.clone();
                }
                "headless" => headless = true,
                "fallthrough" => {
                    let args = d.remaining_args();
                    fall = Fallthrough::parse(&args).map_err(|e| fail(d, e))?;
                }
                other => return Err(fail(d, format_args!("unknown property '{other}'"))),
            }
        }
    }
    if !block.directives.contains(&SOURCE) {
        // At the directive's line: the error is of the directive, not of its last option.
        let mut e = fail(d, "kubernetes plugin not loaded");
        e.line = line.unwrap_or(e.line);
        return Err(e);
    }
    let mut apex_wire = name_to_wire(&format!("{}.", apex.trim_end_matches('.')))
        .map_err(|e| fail(d, format_args!("invalid apex '{apex}': {e:?}")))?;
    let apex_labels = Name::from_wire(&apex_wire).map_or(0, |n| n.label_count());
    apex_wire.pop();
    if apex_wire.is_empty() {
        return Err(fail(d, format_args!("invalid apex '{apex}'")));
    }
    let zones: Vec<Vec<u8>> = zones.iter().filter_map(|z| name_to_wire(z).ok()).collect();
    let mut apex_zones = Vec::with_capacity(zones.len());
    for z in &zones {
        let w = [apex_wire.as_slice(), z].concat();
        // The SOA's `hostmaster.APEX.ZONE` must be a name too.
        if HOSTMASTER.len() + w.len() > 255 {
            return Err(fail(d, format_args!("apex '{apex}' makes a name too long")));
        }
        apex_zones.push(w);
    }
    Ok(Config {
        zones,
        apex_zones,
        apex_labels,
        apex: apex_wire,
        ttl,
        headless,
        fall,
        externalers: block.block_shared::<Externalers>(),
        reported: AtomicBool::new(false),
    })
}
