//! From a parsed Corefile to what the runtime serves: the global tuning block, every server
//! block with its plugins set up, and the listeners with their zone routes.

mod endpoints;
pub mod global;
pub mod hash;
pub mod keys;
mod listeners;
pub mod source;

pub use global::{Tuning, UdpBackend};
pub use keys::{Transport, ZoneAddr};
pub use listeners::{Listener, ListenerKey, Route};
pub use source::{Parsed, Source};

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
    /// The HTTP endpoints the plugins registered, each (address, path) once, in Corefile
    /// order.
    pub http: Vec<crate::plugin::HttpEndpoint>,
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
    if let Some(ids) = core_affinity::get_core_ids() {
        let allowed: Vec<usize> = ids.into_iter().map(|c| c.id).collect();
        global::check_host(&cf.global, &tuning, &allowed)?;
    }
    let mut blocks = Vec::with_capacity(cf.blocks.len());
    // One per load: what the plugins keep across this configuration's blocks.
    let shared = crate::plugin::ConfigShared::default();
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
            directives: chain::PLUGINS
                .iter()
                .copied()
                .filter(|p| sb.directives.iter().any(|d| d.name == *p))
                .collect(),
            config_shared: shared.clone(),
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
    let mut listeners =
        listeners::group(&blocks).map_err(|(block, msg)| err_at(first_keys[block], &msg))?;
    for l in &mut listeners {
        // The first route is the one of the block that made the listener.
        if let Some(r) = l.routes.first() {
            let key = first_keys[r.block];
            l.origin = format!("{}:{}", key.file, key.line);
        }
    }
    fill_routes(&blocks, &listeners);
    let http = endpoints::gather(&blocks, &first_keys)?;
    Ok(Config {
        tuning,
        blocks,
        listeners,
        http,
    })
}

/// Tells each block the (server, zone) pairs it answers for, now that listeners are known.
fn fill_routes(blocks: &[Block], listeners: &[Listener]) {
    let mut per_block: Vec<Vec<(String, String)>> = vec![Vec::new(); blocks.len()];
    for l in listeners {
        for r in &l.routes {
            per_block[r.block].push((l.name.clone(), r.zone.clone()));
        }
    }
    for (b, routes) in blocks.iter().zip(per_block) {
        // A fresh BlockSetup per load: never set before.
        let _ = b.setup.routes.set(routes);
    }
}

fn err_at(tok: &Token, msg: &str) -> Error {
    Error {
        file: tok.file.clone(),
        line: tok.line,
        message: msg.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corefile::parse;

    fn load_text(text: &str) -> Result<Config, String> {
        let cf =
            parse("Corefile", text, &crate::chain::known_directive).map_err(|e| e.to_string())?;
        load(&cf, 1053).map_err(|e| e.to_string())
    }

    #[test]
    fn blocks_on_one_port_share_a_listener() {
        let c = load_text(
            "example.org {\n whoami\n}\n.:1053 {\n whoami\n}\nexample.net:2053 {\n whoami\n}\n",
        )
        .unwrap();
        assert_eq!(c.listeners.len(), 2);
        let l = &c.listeners[0];
        assert_eq!(l.name, "dns://:1053");
        let zones: Vec<(&str, usize)> = l
            .routes
            .iter()
            .map(|r| (r.zone.as_str(), r.block))
            .collect();
        assert_eq!(zones, vec![("example.org.", 0), (".", 1)]);
        assert_eq!(c.listeners[1].name, "dns://:2053");
    }

    #[test]
    fn bind_makes_one_listener_per_address() {
        let c = load_text(".:1053 {\n bind 127.0.0.1 ::1\n whoami\n}\n").unwrap();
        let names: Vec<&str> = c.listeners.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, vec!["dns://127.0.0.1:1053", "dns://[::1]:1053"]);
    }

    #[test]
    fn several_keys_and_reverse_keys_share_one_block() {
        let c = load_text("a.test b.test, 10.0.0.0/15 {\n whoami\n}\n").unwrap();
        assert_eq!(c.blocks.len(), 1);
        assert_eq!(
            c.blocks[0].setup.zones,
            vec![
                "a.test.",
                "b.test.",
                "0.10.in-addr.arpa.",
                "1.10.in-addr.arpa."
            ]
        );
    }

    #[test]
    fn blocks_learn_their_directives_and_routes() {
        let c = load_text(
            "a.test:1053 b.test:2053 {\n whoami\n log\n}\n.:1053 {\n bind 127.0.0.1\n cache\n whoami\n}\n",
        )
        .unwrap();
        assert_eq!(c.blocks[0].setup.directives, vec!["log", "whoami"]);
        assert_eq!(
            c.blocks[0].setup.routes.get().unwrap(),
            &vec![
                ("dns://:1053".to_string(), "a.test.".to_string()),
                ("dns://:2053".to_string(), "b.test.".to_string())
            ]
        );
        assert_eq!(
            c.blocks[1].setup.routes.get().unwrap(),
            &vec![("dns://127.0.0.1:1053".to_string(), ".".to_string())]
        );
    }

    #[test]
    fn errors_carry_the_key_line() {
        let e = load_text("\n.:1053 {\n whoami\n}\n\n.:1053 {\n whoami\n}\n")
            .err()
            .unwrap();
        assert_eq!(
            e,
            "Corefile:6 - cannot serve dns://.:1053 - it is already defined"
        );
        let e = load_text("grpc://.:443 {\n whoami\n}\n").err().unwrap();
        assert_eq!(
            e,
            "Corefile:1 - grpc://.:443 - transport 'grpc' is not supported yet (only dns:// is)"
        );
    }

    #[test]
    fn proxyproto_is_a_listener_s_the_last_block_s_policy_winning() {
        use crate::plugin::ProxyPolicy;
        // As CoreDNS's server takes it from its sites: every block of the listener is
        // under it, the last block that sets it gives the policy, the last positive
        // session duration and cap stay. A listener of no such block reads no header.
        let c = load_text(
            "a.test:1053 {\n proxyproto {\n  udp_session_tracking 10s 50\n }\n whoami\n}\n\
             b.test:1053 {\n whoami\n}\n\
             c.test:1053 {\n proxyproto {\n  allow 10.0.0.0/8\n  default reject\n }\n whoami\n}\n\
             d.test:2053 {\n whoami\n}\n",
        )
        .unwrap();
        let p = c.listeners[0].proxy.as_ref().unwrap();
        assert_eq!(p.policy("10.1.1.1".parse().unwrap()), ProxyPolicy::Use);
        assert_eq!(p.policy("127.0.0.1".parse().unwrap()), ProxyPolicy::Reject);
        assert_eq!(p.session_ttl, std::time::Duration::from_secs(10));
        assert_eq!(p.session_cap(), 50);
        assert!(c.listeners[1].proxy.is_none());
    }

    /// `/ready` as the configuration's handler answers it while the server serves.
    fn ready(c: &Config) -> (u16, String) {
        let e = c.http.iter().find(|e| e.path == "/ready").unwrap();
        let r = (e.handler)(&crate::plugin::HttpRequest {
            path: "/ready",
            query: "",
            serving: true,
        });
        (r.status, String::from_utf8(r.body.into_owned()).unwrap())
    }

    #[test]
    fn ready_waits_for_the_plugins_of_the_blocks_that_enable_it() {
        // erratic reports readiness (not before its 3rd query); only the blocks that enable
        // `ready` are watched. The mode across blocks is the ready plugin's own test.
        let c = load_text(
            "a.test {\n ready {\n  monitor continuously\n }\n erratic\n}\n\
             b.test {\n erratic\n}\n\
             c.test {\n ready 127.0.0.1:8182\n erratic\n}\n",
        )
        .unwrap();
        assert_eq!(ready(&c), (503, "erratic".to_string()));
        let c = load_text("a.test {\n erratic\n}\nb.test {\n ready\n whoami\n}\n").unwrap();
        assert_eq!(ready(&c), (200, "OK".to_string()));
    }

    #[test]
    fn endpoints_are_served_once_per_address_and_path() {
        let c = load_text(
            "a.test {\n health 127.0.0.1:8080\n ready 127.0.0.1:8080\n prometheus 127.0.0.1:9153\n whoami\n}\n\
             b.test {\n health 127.0.0.1:8080\n prometheus 127.0.0.1:9154\n whoami\n}\n",
        )
        .unwrap();
        let got: Vec<(String, &str, &str)> = c
            .http
            .iter()
            .map(|e| (e.addr.to_string(), e.path.as_str(), e.plugin))
            .collect();
        assert_eq!(
            got,
            vec![
                ("127.0.0.1:8080".to_string(), "/ready", "ready"),
                ("127.0.0.1:8080".to_string(), "/health", "health"),
                ("127.0.0.1:9153".to_string(), "/metrics", "prometheus"),
                ("127.0.0.1:9154".to_string(), "/metrics", "prometheus"),
            ]
        );
    }
}
