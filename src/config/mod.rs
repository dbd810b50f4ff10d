//! From a parsed Corefile to what the runtime serves: the global tuning block, every server
//! block with its plugins set up, and the listeners with their zone routes.

pub mod global;
pub mod keys;
mod listeners;
pub mod reverse;

pub use global::{Tuning, UdpBackend};
pub use keys::{Transport, ZoneAddr};
pub use listeners::{Listener, Route};

use crate::chain::{self, BlockConfigs};
use crate::corefile::{Corefile, Error, Token};
use crate::plugin::BlockSetup;
use std::sync::Arc;

/// The Corefile CoreDNS serves when there is none: whoami and query logging on every name.
pub fn default_corefile(port: u16) -> String {
    format!(".:{port} {{\n    whoami\n    log\n}}\n")
}

/// A whole validated configuration, ready to be instantiated on every core.
pub struct Config {
    /// Process-wide tuning from the global block.
    pub tuning: Tuning,
    /// The server blocks in Corefile order.
    pub blocks: Vec<Block>,
    /// One entry per (transport, bind address, port), with its routes.
    pub listeners: Vec<Listener>,
}

/// One server block after setup: its zones and every plugin's parsed configuration.
pub struct Block {
    /// The zones of its keys, after reverse expansion, in key order.
    pub zones: Vec<ZoneAddr>,
    /// Block-wide settings recorded by the directives (bind, root, debug, …).
    pub setup: BlockSetup,
    /// Each plugin's configuration, shared by the cores that build their chains from it.
    pub plugins: Arc<BlockConfigs>,
}

/// Builds the configuration from a parsed Corefile; `dns_port` is `-dns.port`.
pub fn load(cf: &Corefile, dns_port: u16) -> Result<Config, Error> {
    let tuning = global::parse(&cf.global)?;
    let mut blocks = Vec::with_capacity(cf.blocks.len());
    let mut first_keys: Vec<&Token> = Vec::new();
    for sb in &cf.blocks {
        let mut zones = Vec::new();
        for key in &sb.keys {
            let parsed = keys::parse_key(&key.text, dns_port).map_err(|m| err_at(key, &m))?;
            for z in &parsed {
                if z.transport != Transport::Dns {
                    return Err(err_at(
                        key,
                        &format!(
                            "{}://{}:{} - transport '{}' is not supported yet (only dns:// is)",
                            z.transport.scheme(),
                            z.zone,
                            z.port,
                            z.transport.scheme()
                        ),
                    ));
                }
            }
            zones.extend(parsed);
        }
        let mut setup = BlockSetup {
            zones: zones.iter().map(|z| z.zone.clone()).collect(),
            ..BlockSetup::default()
        };
        let plugins = chain::setup_block(&sb.directives, &mut setup)?;
        first_keys.push(&sb.keys[0]);
        blocks.push(Block {
            zones,
            setup,
            plugins: Arc::new(plugins),
        });
    }
    let listeners =
        listeners::group(&blocks).map_err(|(block, msg)| err_at(first_keys[block], &msg))?;
    Ok(Config {
        tuning,
        blocks,
        listeners,
    })
}

fn err_at(tok: &Token, msg: &str) -> Error {
    Error {
        file: tok.file.clone(),
        line: tok.line,
        message: msg.to_string(),
    }
}
