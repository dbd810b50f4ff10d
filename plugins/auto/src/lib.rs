//! auto: every zone file of a directory served as *file* serves one, as CoreDNS's auto
//! plugin: zones appear, change and disappear with their files, found by a scan every
//! `reload` period.
//!
//! The zones of each `auto` line are an immutable list ([`Snapshot`]) that the scanning
//! thread replaces whole; every core reads it without a lock, and answers from the zone as
//! file does (ringdns-zone's [`serving`]).
//!
//! [`Snapshot`]: ringdns_plugin::snapshot::Snapshot

#![forbid(unsafe_code)]

mod scan;
mod setup;

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::wire::opcode;
use ringdns_plugin::{
    BlockSetup, CoreInfo, Fallthrough, Handler, Outcome, Plugin, Request, Serve, Serves, Status,
};
use ringdns_zone::registry::Registry;
use ringdns_zone::serving::{self, Local};
use scan::{Lookup, Source};
use std::future::Future;
use std::sync::Arc;

/// The block's `auto` lines, in order.
pub struct Config {
    sources: Vec<Arc<Source>>,
    /// auto has no `fallthrough`: an NXDOMAIN is the answer.
    fall: Fallthrough,
}

impl Config {
    /// The settings of each line, for setup's tests.
    #[cfg(test)]
    fn settings_for_tests(&self) -> Vec<setup::Settings> {
        self.sources.iter().map(|s| s.settings().clone()).collect()
    }
}

/// The per-core instance: the configuration it serves from.
pub struct Auto {
    config: Arc<Config>,
}

impl Plugin for Auto {
    const NAME: &'static str = "auto";
    type Config = Config;
    type Place = Serves;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Config, Error> {
        let registry = block.block_shared::<Registry>();
        let mut sources = Vec::new();
        while d.next() {
            let settings = setup::parse(d, block)?;
            let source =
                Source::start(settings, registry.clone()).map_err(|e| d.plugin_err("auto", e))?;
            let source = Arc::new(source);
            if !source.reload().is_zero() {
                ringdns_plugin::snapshot::poll_while(
                    &source.thread_name(),
                    source.reload(),
                    &source,
                    Source::scan,
                )
                .map_err(|e| d.plugin_err("auto", format!("cannot start the scan thread: {e}")))?;
            }
            sources.push(source);
        }
        Ok(Config {
            sources,
            fall: Fallthrough::default(),
        })
    }
}

impl Auto {
    /// Answers from the zone into the reply, as far as the zone alone can. As CoreDNS's
    /// auto: a name outside the plugin's zones goes on (SERVFAIL when nothing follows); one
    /// inside them that no loaded zone holds goes on too, REFUSED when nothing follows.
    fn local(&self, req: &mut Request<'_>) -> Local {
        let qname = req.query.qname();
        let mut ours = false;
        for source in &self.config.sources {
            let found = source.lookup(&qname, req.query.qtype(), |z| {
                if req.query.opcode() == opcode::NOTIFY {
                    return serving::drop_notify(Self::NAME, req, &z.name);
                }
                serving::local(req, &z.data, &self.config.fall)
            });
            match found {
                Lookup::NotAuthoritative => {}
                Lookup::NoZone => ours = true,
                Lookup::Zone(local) => return local,
            }
        }
        if ours { Local::NotOurs } else { Local::Next }
    }
}

impl Serve for Auto {
    fn build(config: &Arc<Config>, _core: &CoreInfo) -> Option<Self> {
        Some(Auto {
            config: Arc::clone(config),
        })
    }

    // Not an `async fn`: serving's future is the whole of it (see `ServeFuture`).
    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        let local = self.local(req);
        serving::serve(Self::NAME, local, req, next)
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        let local = self.local(req);
        serving::serve_now(Self::NAME, local, req, next)
    }
}

ringdns_plugin::export!(Auto);

#[cfg(test)]
mod testdir {
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Tells apart the directories of tests that run at once.
    static NEXT: AtomicUsize = AtomicUsize::new(0);

    /// A directory of a test's own, removed after it.
    pub struct Dir(pub PathBuf);

    impl Dir {
        pub fn new(tag: &str) -> Dir {
            let p = std::env::temp_dir().join(format!(
                "ringdns-auto-{tag}-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).unwrap();
            Dir(p)
        }
        pub fn touch(&self, rel: &str) {
            let p = self.0.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
