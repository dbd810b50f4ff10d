//! ready: an HTTP `/ready` endpoint for load balancers. It answers 200 `OK` while the server
//! serves (503 during start-up and from the moment a stop begins, i.e. lameduck) and every
//! plugin that reports readiness in the blocks that enable `ready` is ready; otherwise 503
//! with the names of the plugins not ready, as CoreDNS. Process-wide: one watch per
//! configuration, over every block that enables `ready`, asked in the mode the last of them
//! sets, whichever of their addresses is asked. The endpoint's handler runs on the server's
//! HTTP thread for its address, off the query path.

#![forbid(unsafe_code)]

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::readiness::{Monitor, Watch};
use ringdns_plugin::{
    BlockSetup, ConfigOnly, HttpRequest, HttpResponse, Plugin, Readiness, http_addr_arg,
};
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// Configuration-only: registers `/ready` on its address, answered from the
/// configuration's [`Shared`] watch.
pub struct Ready;

/// The readiness lists of one block's plugins, known once the block's setups all ran.
type BlockReadiness = Arc<OnceLock<Vec<Weak<dyn Readiness>>>>;

/// What `/ready` asks for one configuration, shared by its blocks that enable `ready`.
#[derive(Default)]
struct Shared {
    /// Filled by the setups, in block order.
    parts: Mutex<Parts>,
    /// Made from `parts` at the first request, once every setup of the configuration ran;
    /// it keeps which plugins reported ready (`until-ready`) for this configuration's life.
    watch: OnceLock<Watch>,
}

#[derive(Default)]
struct Parts {
    /// The last block's mode (CoreDNS: each `ready` setup overwrites the one process-wide
    /// mode, in block order).
    monitor: Monitor,
    /// The readiness lists of the blocks that enable `ready`.
    blocks: Vec<BlockReadiness>,
}

impl Shared {
    fn parts(&self) -> std::sync::MutexGuard<'_, Parts> {
        self.parts.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn watch(&self) -> &Watch {
        self.watch.get_or_init(|| {
            let parts = self.parts();
            let plugins = parts
                .blocks
                .iter()
                .flat_map(|b| b.get().into_iter().flatten().cloned())
                .collect();
            Watch::new(parts.monitor, plugins)
        })
    }

    fn respond(&self, req: &HttpRequest<'_>) -> HttpResponse {
        if !req.serving {
            return HttpResponse::text(503, "not ready: the server is starting or stopping\n");
        }
        let waiting = self.watch().not_ready();
        if waiting.is_empty() {
            return HttpResponse::text(200, "OK");
        }
        // As CoreDNS: the names, comma-separated, and a log line per refusal.
        let names = waiting.join(",");
        ringdns_plugin::info!("plugin/ready: Plugins not ready: {names:?}");
        HttpResponse::text(503, names)
    }
}

impl Plugin for Ready {
    const NAME: &'static str = "ready";
    type Config = ();
    type Place = ConfigOnly;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<(), Error> {
        let mut seen = false;
        while d.next() {
            ringdns_plugin::once_per_block(d, &mut seen)?;
            let addr = http_addr_arg(d, Self::NAME, ":8181")?;
            let mut monitor = Monitor::default();
            while d.next_block() {
                match d.val() {
                    "monitor" => {
                        let args = d.remaining_args();
                        let [v] = args.as_slice() else {
                            return Err(d.arg_err());
                        };
                        monitor = Monitor::parse(v).ok_or_else(|| {
                            d.plugin_err("ready", format!("monitor type '{v}' not supported"))
                        })?;
                    }
                    other => {
                        return Err(d.plugin_err("ready", format!("unknown property '{other}'")));
                    }
                }
            }
            let shared = block.shared::<Shared>();
            {
                let mut parts = shared.parts();
                parts.monitor = monitor;
                parts.blocks.push(block.readiness.clone());
            }
            block.http_endpoint(addr, "/ready", move |req| shared.respond(req));
        }
        Ok(())
    }
}

ringdns_plugin::export!(Ready);

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// The address of `/ready` and the configuration's mode, after setup of `text`.
    fn setup(text: &str) -> Result<Option<(SocketAddr, Monitor)>, String> {
        let block = ringdns_testkit::setup::<Ready>(text)?;
        let monitor = block.shared::<Shared>().parts().monitor;
        Ok(block
            .http
            .iter()
            .find(|e| e.path == "/ready")
            .map(|e| (e.addr, monitor)))
    }

    #[test]
    fn address_and_monitor() {
        let any: SocketAddr = "0.0.0.0:8181".parse().unwrap();
        let local: SocketAddr = "127.0.0.1:1234".parse().unwrap();
        let ok = |t: &str| setup(t).unwrap().unwrap();
        assert_eq!(ok(". {\n ready\n}\n"), (any, Monitor::UntilReady));
        assert_eq!(
            ok(". {\n ready 127.0.0.1:1234\n}\n"),
            (local, Monitor::UntilReady)
        );
        assert_eq!(
            ok(". {\n ready {\n  monitor until-ready\n }\n}\n"),
            (any, Monitor::UntilReady)
        );
        assert_eq!(
            ok(". {\n ready {\n  monitor continuously\n }\n}\n"),
            (any, Monitor::Continuously)
        );
        assert_eq!(
            ok(". {\n ready 127.0.0.1:1234 {\n  monitor continuously\n }\n}\n"),
            (local, Monitor::Continuously)
        );
        // The last `monitor` line of the block wins, as in CoreDNS.
        assert_eq!(
            ok(". {\n ready {\n  monitor continuously\n  monitor until-ready\n }\n}\n"),
            (any, Monitor::UntilReady)
        );
    }

    #[test]
    fn errors() {
        let e = |t: &str| setup(t).unwrap_err();
        assert_eq!(
            e(". {\n ready {\n  monitor 404\n }\n}\n"),
            "Corefile:3 - Error during parsing: plugin/ready: monitor type '404' not supported"
        );
        assert_eq!(
            e(". {\n ready {\n  monitro continuously\n }\n}\n"),
            "Corefile:3 - Error during parsing: plugin/ready: unknown property 'monitro'"
        );
        assert_eq!(
            e(". {\n ready {\n  monitor\n }\n}\n"),
            "Corefile:3 - Error during parsing: Wrong argument count or unexpected line ending after 'monitor'"
        );
        assert_eq!(
            e(". {\n ready {\n  monitor until-ready continuously\n }\n}\n"),
            "Corefile:3 - Error during parsing: Wrong argument count or unexpected line ending after 'continuously'"
        );
        assert_eq!(
            e(". {\n ready 127.0.0.1:1234 b\n}\n"),
            "Corefile:2 - Error during parsing: Wrong argument count or unexpected line ending after 'b'"
        );
        assert!(
            e(". {\n ready bla\n}\n").contains("plugin/ready: invalid address 'bla'"),
            "{}",
            e(". {\n ready bla\n}\n")
        );
        assert_eq!(
            e(". {\n ready\n ready\n}\n"),
            "Corefile:3 - Error during parsing: this plugin can only be used once per Server Block"
        );
    }

    struct Flag(&'static str, AtomicBool);

    impl Readiness for Flag {
        fn name(&self) -> &'static str {
            self.0
        }
        fn ready(&self) -> bool {
            self.1.load(Ordering::Relaxed)
        }
    }

    /// Sets up `text`'s blocks, then gives block `i` the readiness handles `flags[i]`, as
    /// the server does once a block's setups ran.
    fn configuration(text: &str, flags: &[&[&Arc<Flag>]]) -> Vec<BlockSetup> {
        let blocks: Vec<BlockSetup> = ringdns_testkit::blocks::<Ready>(text)
            .unwrap()
            .into_iter()
            .map(|(b, _)| b)
            .collect();
        for (b, f) in blocks.iter().zip(flags) {
            let weak = f.iter().map(|f| Arc::downgrade(f) as Weak<dyn Readiness>);
            b.readiness.set(weak.collect()).ok().unwrap();
        }
        blocks
    }

    fn ask(block: &BlockSetup, serving: bool) -> (u16, String) {
        let e = block.http.iter().find(|e| e.path == "/ready").unwrap();
        let r = (e.handler)(&HttpRequest {
            path: "/ready",
            query: "",
            serving,
        });
        (r.status, String::from_utf8(r.body.into_owned()).unwrap())
    }

    fn flag(name: &'static str) -> Arc<Flag> {
        Arc::new(Flag(name, AtomicBool::new(false)))
    }

    #[test]
    fn ready_waits_for_the_plugins_of_its_blocks_in_the_last_blocks_mode() {
        let (a, b, c) = (flag("erratic"), flag("erratic"), flag("erratic"));
        // Only the blocks that enable `ready` are watched.
        let blocks = configuration(
            "a.test {\n ready {\n  monitor continuously\n }\n}\n\
             b.test {\n}\n\
             c.test {\n ready 127.0.0.1:8182\n}\n",
            &[&[&a], &[&b], &[&c]],
        );
        let shared = blocks[0].shared::<Shared>();
        assert_eq!(shared.watch().len(), 2);
        assert_eq!(
            shared.watch().monitor(),
            Monitor::UntilReady,
            "the last block's"
        );
        assert_eq!(shared.watch().not_ready(), vec!["erratic"]);
        let p = flag("p");
        let blocks = configuration(
            "a.test {\n ready\n}\nb.test {\n ready {\n  monitor continuously\n }\n}\n",
            &[&[&p], &[]],
        );
        let shared = blocks[0].shared::<Shared>();
        assert_eq!(shared.watch().len(), 1);
        assert_eq!(shared.watch().monitor(), Monitor::Continuously);
        let blocks = configuration(
            "a.test {\n}\nb.test {\n ready\n}\n",
            &[&[&flag("erratic")], &[]],
        );
        let shared = blocks[1].shared::<Shared>();
        assert!(shared.watch().is_empty());
        assert!(shared.watch().not_ready().is_empty());
    }

    #[test]
    fn every_address_answers_from_one_watch_and_only_while_serving() {
        let a = flag("alpha");
        let blocks = configuration(
            "a.test {\n ready 127.0.0.1:8181\n}\nb.test {\n ready 127.0.0.1:8182\n}\n",
            &[&[&a], &[]],
        );
        let starting = (
            503,
            "not ready: the server is starting or stopping\n".to_string(),
        );
        assert_eq!(ask(&blocks[0], false), starting);
        assert_eq!(ask(&blocks[1], true), (503, "alpha".to_string()));
        a.1.store(true, Ordering::Relaxed);
        assert_eq!(ask(&blocks[0], true), (200, "OK".to_string()));
        // until-ready: ready once, ready for good, on either address.
        a.1.store(false, Ordering::Relaxed);
        assert_eq!(ask(&blocks[1], true), (200, "OK".to_string()));
        assert_eq!(ask(&blocks[1], false), starting);
    }
}
