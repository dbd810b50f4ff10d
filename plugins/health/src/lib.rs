//! health: an HTTP `/health` endpoint that answers 200 `OK` while the process runs, and the
//! lameduck time a stop waits while still serving (a shutdown hook: the longest lameduck of
//! the configuration's blocks, waited once). Process-wide; the endpoint itself runs in the
//! server's HTTP thread for its address, off the query path.

#![forbid(unsafe_code)]

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::{
    BlockSetup, ConfigOnly, HttpResponse, Plugin, Stopping, duration, http_addr_arg,
};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Configuration-only: registers `/health` on its address and the lameduck wait as a
/// shutdown hook.
pub struct Health;

/// CoreDNS's default address, `:8080`.
const DEFAULT: &str = ":8080";

impl Plugin for Health {
    const NAME: &'static str = "health";
    type Config = ();
    type Place = ConfigOnly;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<(), Error> {
        let mut seen = false;
        while d.next() {
            ringdns_plugin::once_per_block(d, &mut seen)?;
            let addr = http_addr_arg(d, Self::NAME, DEFAULT)?;
            let mut lameduck = Duration::ZERO;
            while d.next_block() {
                match d.val() {
                    "lameduck" => {
                        let a = d.remaining_args();
                        let [v] = a.as_slice() else {
                            return Err(d.arg_err());
                        };
                        lameduck = duration::parse(v).map_err(|e| {
                            d.err(&format!(
                                "plugin/health: unable to parse lameduck duration value: '{v}': {e}"
                            ))
                        })?;
                    }
                    other => {
                        return Err(d.plugin_err("health", format!("unknown property '{other}'")));
                    }
                }
            }
            block.http_endpoint(addr, "/health", |_| HttpResponse::text(200, "OK"));
            let shared = block.shared::<Lameduck>();
            shared.at_least(lameduck);
            if !shared.hooked.swap(true, Ordering::AcqRel) {
                block.on_shutdown(move |stopping| shared.wait(stopping));
            }
        }
        Ok(())
    }
}

/// The lameduck of a configuration: the longest any of its `health` blocks asks for, waited
/// once by the one shutdown hook the first of them registered.
#[derive(Default)]
struct Lameduck {
    longest: Mutex<Duration>,
    /// The configuration's shutdown hook is registered.
    hooked: AtomicBool,
}

impl Lameduck {
    fn at_least(&self, d: Duration) {
        let mut l = self.longest.lock().unwrap_or_else(|e| e.into_inner());
        *l = (*l).max(d);
    }

    fn longest(&self) -> Duration {
        *self.longest.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// On SIGTERM, keeps the server answering (and `/health` at 200) for the lameduck; a
    /// SIGINT cuts that short.
    fn wait(&self, stopping: &Stopping<'_>) {
        let lameduck = self.longest();
        if !stopping.graceful() || lameduck.is_zero() {
            return;
        }
        ringdns_plugin::info!(
            "Going into lameduck mode for {}",
            duration::format(lameduck)
        );
        stopping.serve_for(lameduck);
    }
}

ringdns_plugin::export!(Health);

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn lameduck(block: &BlockSetup) -> Duration {
        block.shared::<Lameduck>().longest()
    }

    #[test]
    fn one_hook_waits_the_longest_lameduck_of_the_configuration() {
        let blocks = ringdns_testkit::blocks::<Health>(
            "a.test {\n health 127.0.0.1:8091 {\n  lameduck 300ms\n }\n}\n\
             b.test {\n health 127.0.0.1:8092 {\n  lameduck 1s\n }\n}\n\
             c.test {\n health 127.0.0.1:8093\n}\nd.test {\n}\n",
        )
        .unwrap();
        let hooks: Vec<usize> = blocks.iter().map(|(b, _)| b.shutdown.len()).collect();
        assert_eq!(
            hooks,
            vec![1, 0, 0, 0],
            "registered once, by the first block"
        );
        assert_eq!(lameduck(&blocks[0].0), Duration::from_secs(1));
        // Another configuration (a reload) starts over.
        let (block, _) = ringdns_testkit::config::<Health>(". {\n health\n}\n").unwrap();
        assert_eq!(lameduck(&block), Duration::ZERO);
        assert_eq!(block.shutdown.len(), 1);
    }

    #[test]
    fn health_is_ok_on_its_address() {
        let (block, _) =
            ringdns_testkit::config::<Health>(". {\n health 127.0.0.1:8091\n}\n").unwrap();
        let [e] = block.http.as_slice() else {
            panic!("{:?}", block.http)
        };
        assert_eq!(e.addr, "127.0.0.1:8091".parse().unwrap());
        assert_eq!(e.path, "/health");
        let req = ringdns_plugin::HttpRequest {
            path: "/health",
            query: "",
            serving: false,
        };
        let r = (e.handler)(&req);
        assert_eq!((r.status, &*r.body), (200, &b"OK"[..]));
        let (block, _) = ringdns_testkit::config::<Health>(". {\n health\n}\n").unwrap();
        assert_eq!(block.http[0].addr, "0.0.0.0:8080".parse().unwrap());
    }

    #[test]
    fn the_hook_waits_on_sigterm_only() {
        let (block, _) = ringdns_testkit::config::<Health>(
            ". {\n health 127.0.0.1:8091 {\n  lameduck 200ms\n }\n}\n",
        )
        .unwrap();
        let never = || false;
        let t0 = Instant::now();
        block.shutdown[0].run(&Stopping::new(false, &never));
        assert!(
            t0.elapsed() < Duration::from_millis(150),
            "SIGINT: no lameduck"
        );
        let t0 = Instant::now();
        block.shutdown[0].run(&Stopping::new(true, &never));
        assert!(
            t0.elapsed() >= Duration::from_millis(200),
            "SIGTERM: lameduck"
        );
        // A second SIGINT during the lameduck cuts it short.
        let cut = || true;
        let t0 = Instant::now();
        block.shutdown[0].run(&Stopping::new(true, &cut));
        assert!(t0.elapsed() < Duration::from_millis(150));
    }
}
