//! The chain: one concrete nested type built from plugin.cfg, so the compiler sees every
//! plugin of a block's chain at once and nothing on the query path is `dyn`.
//!
//! build.rs resolves each plugin.cfg line to the crate that provides it and writes one
//! [`chain!`] invocation (`"directive" => crate,` per line, outermost first); the macro
//! below turns it into the plugin table, the chain type, each block's configurations and
//! the per-core builder. Where a plugin sits is its type's business ([`Plugin::Place`]): a
//! plugin that serves is a [`Link`](crate::plugin::Link), one that only configures its
//! block is no link at all.

use crate::corefile::{Directive, Dispenser, Error};
use crate::plugin::{BlockSetup, Plugin};
use std::sync::Arc;

/// Expands the list build.rs writes from plugin.cfg (`"directive" => crate,` per line) into
/// [`PLUGINS`], [`Chain`], [`BlockConfigs`], [`setup_block`] and [`build_chain`]. Each crate
/// (or module) names its plugin type with `ringdns_plugin::export!`. Every path in it is
/// absolute, so tests/chain_depth.rs can expand it over a chain of its own.
#[macro_export]
#[doc(hidden)]
macro_rules! chain {
    ($($directive:literal => $krate:ident,)*) => {
        /// Directive names in plugin.cfg order (outermost first).
        pub const PLUGINS: &[&str] = &[$($directive),*];

        // Each plugin's own name is the directive its plugin.cfg line gives: a line that
        // names the wrong crate (or a crate whose NAME changed) does not compile.
        $(
            const _: () = assert!(
                $crate::plugin::same_name(<$krate::RingdnsPlugin as $crate::plugin::Plugin>::NAME, $directive),
                concat!("plugin.cfg: the crate of '", $directive, ":…' declares another NAME"),
            );
        )*

        /// The chain type: a link per plugin.cfg line whose plugin serves, innermost last.
        pub type Chain = $crate::chain!(@type $($krate)*);

        /// Every plugin's parsed configuration for one server block; shared by all cores.
        #[derive(Default)]
        pub struct BlockConfigs {
            $(
                $krate: Option<::std::sync::Arc<<$krate::RingdnsPlugin as $crate::plugin::Plugin>::Config>>,
            )*
        }

        /// Runs each plugin's setup, in plugin.cfg order, for the directives one block uses.
        pub fn setup_block(
            directives: &[$crate::corefile::Directive],
            block: &mut $crate::plugin::BlockSetup,
        ) -> Result<BlockConfigs, $crate::corefile::Error> {
            let mut out = BlockConfigs::default();
            let mut readiness = ::std::vec::Vec::new();
            $(
                if let Some(d) = directives.iter().find(|d| d.name == $directive) {
                    out.$krate = Some($crate::chain::setup::<$krate::RingdnsPlugin>(
                        d,
                        block,
                        &mut readiness,
                    )?);
                }
            )*
            // A fresh BlockSetup per load: never set before.
            let _ = block.readiness.set(readiness);
            Ok(out)
        }

        /// Builds one core's chain from a block's configurations, outermost plugin first.
        pub fn build_chain(cfg: &BlockConfigs, core: &$crate::plugin::CoreInfo) -> Chain {
            $crate::chain!(@build cfg core $($krate)*)
        }
    };
    (@type) => { $crate::plugin::End };
    (@type $krate:ident $($rest:ident)*) => {
        <<$krate::RingdnsPlugin as $crate::plugin::Plugin>::Place as $crate::plugin::Place<$krate::RingdnsPlugin>>::Linked<
            $crate::chain!(@type $($rest)*)
        >
    };
    (@build $cfg:ident $core:ident) => { $crate::plugin::End };
    (@build $cfg:ident $core:ident $krate:ident $($rest:ident)*) => {{
        // This plugin's configuration first, then the rest of the chain: the instances are
        // built outermost first, as the lines of plugin.cfg read.
        let config = $cfg.$krate.as_ref();
        let rest = || $crate::chain!(@build $cfg $core $($rest)*);
        <<$krate::RingdnsPlugin as $crate::plugin::Plugin>::Place as $crate::plugin::Place<$krate::RingdnsPlugin>>::link(
            config, $core, rest,
        )
    }};
}

/// One plugin's setup on the directives of its name in a block: the HTTP endpoints it
/// registered are marked as its own, and its readiness handle joins `readiness` (called by
/// [`chain!`]'s `setup_block`, which hands the block's list to `BlockSetup::readiness`).
#[doc(hidden)]
pub fn setup<P: Plugin>(
    d: &Directive,
    block: &mut BlockSetup,
    readiness: &mut Vec<std::sync::Weak<dyn crate::plugin::Readiness>>,
) -> Result<Arc<P::Config>, Error> {
    let mut disp = Dispenser::new(&d.tokens);
    let registered = block.http.len();
    let config = Arc::new(P::setup(&mut disp, block)?);
    for e in &mut block.http[registered..] {
        e.plugin = P::NAME;
    }
    readiness.extend(P::readiness(&config));
    Ok(config)
}

include!(concat!(env!("OUT_DIR"), "/chain.rs"));

/// Whether `name` is a directive of a compiled plugin; the parser rejects the others with
/// `Unknown directive 'NAME'`.
pub fn known_directive(name: &str) -> bool {
    PLUGINS.contains(&name)
}
