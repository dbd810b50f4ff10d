//! `autopath [ZONE...] RESOLV-CONF` and `autopath [ZONE...] @PLUGIN`, parsed as CoreDNS's
//! `autoPathParse`: the last argument is the search path's source, the ones before it the
//! zones (the block's when there are none). A resolv.conf is read at setup, its `search`
//! list normalised (lower-case, fully qualified) and ended with the root, CoreDNS's `""`
//! sentinel; `@PLUGIN` names the block's plugin that gives a search path per query,
//! resolved when the instances are built (the plugin registers itself in its own setup,
//! which runs after this one).

use ringdns_plugin::autopath::{AutoPathers, SearchPath};
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::normalize::{fqdn, origins_from_args_or_block};
use ringdns_plugin::quote::go_quote;
use ringdns_plugin::resolvconf;
use ringdns_plugin::wire::name_to_wire;
use ringdns_plugin::{BlockSetup, warning};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// What setup parsed, shared by every core.
pub struct Config {
    /// The zones autopath works in (lower-case wire names).
    pub zones: Vec<Vec<u8>>,
    /// The resolv.conf's search path, the root last; empty when no file was named.
    pub search: SearchPath,
    /// The plugin named by `@PLUGIN`, whose search path takes precedence.
    pub plugin: Option<PluginSource>,
}

/// `@PLUGIN`: where its search paths will be, and whether the block uses it at all.
pub struct PluginSource {
    /// The directive after the `@`.
    pub name: String,
    /// Whether the block uses that directive. When it does not, CoreDNS finds no handler
    /// and autopath does nothing; when it does but the plugin gives no search paths, that
    /// is CoreDNS's "does not implement the AutoPather interface".
    pub in_block: bool,
    /// The block's registry, which the plugin fills in its setup.
    pub pathers: Arc<AutoPathers>,
    /// Whether the "does not implement" error was logged (once per configuration, by the
    /// first core that builds).
    pub reported: AtomicBool,
}

/// Parses every `autopath` of a block; like CoreDNS, a later one replaces the zones, and
/// the search path of its own kind, of an earlier one.
pub fn parse(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Config, Error> {
    let mut config = Config {
        zones: Vec::new(),
        search: SearchPath::default(),
        plugin: None,
    };
    while d.next() {
        let mut args = d.remaining_args();
        let Some(source) = args.pop() else {
            return Err(d.plugin_err(crate::NAME, "no resolv-conf specified"));
        };
        if let Some(name) = source.strip_prefix('@') {
            config.plugin = Some(PluginSource {
                name: name.to_string(),
                in_block: block.directives.contains(&name),
                pathers: block.block_shared::<AutoPathers>(),
                reported: AtomicBool::new(false),
            });
        } else {
            // miekg's ClientConfigFromFile: the path as given, not under `root`.
            let conf = resolvconf::read(Path::new(&source)).map_err(|e| {
                d.plugin_err(
                    crate::NAME,
                    format!("failed to parse {}: {}", go_quote(&source), e.text),
                )
            })?;
            config.search = search_path(&conf.search);
        }
        let zones = origins_from_args_or_block(crate::NAME, &args, &block.zones);
        config.zones = zones.iter().filter_map(|z| name_to_wire(z).ok()).collect();
    }
    Ok(config)
}

/// A resolv.conf search list as CoreDNS keeps it: each name lower-cased and fully
/// qualified (`plugin.Zones.Normalize`), then the root. A name that is not one (an empty
/// or over-long label) could never be asked for, and is left out with a warning.
pub fn search_path(list: &[String]) -> SearchPath {
    let mut path = SearchPath::default();
    for s in list {
        match name_to_wire(&fqdn(s).to_lowercase()) {
            Ok(w) => path.push(&[&w]),
            Err(e) => warning!(
                "plugin/{}: search domain {} left out: {e:?}",
                crate::NAME,
                go_quote(s)
            ),
        }
    }
    path.push(&[b"\x00"]);
    path
}
