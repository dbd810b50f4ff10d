//! loadbalance: the order of the records of a reply, as CoreDNS's loadbalance plugin
//! (`plugin/loadbalance`) sets it: shuffled (`round_robin`), the first address drawn by
//! weight (`weighted`), addresses of preferred subnets first (`prefer`).
//!
//! It wraps the rest of the chain: once the plugins after it have written a reply, it
//! reorders that reply's records in `req.reply`, on every pass a reply comes back through it
//! (a cache hit too, since the cache sits after it). Only NOERROR replies are touched, and
//! zone transfers (AXFR, IXFR) are left alone. The policies (`order.rs`) give the new order
//! of each section; `rewrite.rs` moves the records, in place when only addresses of one
//! owner move, else by writing the reply anew with its names compressed again. The weight
//! file (`weights.rs`) is read at setup and re-read every `reload` on a thread of the
//! configuration's, its table replaced whole.

#![forbid(unsafe_code)]

mod compress;
mod order;
mod rewrite;
mod setup;
mod weights;

use rewrite::{Policy, Scratch};
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::snapshot::{Snapshot, poll_while};
use ringdns_plugin::wire::header_rcode;
use ringdns_plugin::wire::rcode::NOERROR;
use ringdns_plugin::wire::rtype::{AXFR, IXFR};
use ringdns_plugin::wrap::{self, Wrap};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, Request, Serve, Serves, Status, client_write,
};
use setup::{Options, PolicySpec};
use std::cell::RefCell;
use std::future::Future;
use std::sync::Arc;
use weights::{LoadError, WeightFile, Weights};

/// What setup made of the block's `loadbalance`, shared by every core.
pub struct Config {
    options: Options,
    /// The weight file of the `weighted` policy.
    weights: Option<Arc<WeightFile>>,
}

/// The plugin's instance on one core: the configuration and the core's working room.
pub struct LoadBalance {
    config: Arc<Config>,
    scratch: RefCell<Scratch>,
}

impl Plugin for LoadBalance {
    const NAME: &'static str = "loadbalance";
    type Config = Config;
    type Place = Serves;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Config, Error> {
        let options = setup::parse(d, block)?;
        let weights = match &options.policy {
            PolicySpec::RoundRobin => None,
            PolicySpec::Weighted { path, reload } => Some(start_weights(d, path.clone(), *reload)?),
        };
        Ok(Config { options, weights })
    }
}

/// CoreDNS's `weightedOnStartUp`: the file read once (a file that cannot be opened is
/// only a warning when it will be read again), then the reload thread.
fn start_weights(
    d: &Dispenser<'_>,
    path: std::path::PathBuf,
    reload: std::time::Duration,
) -> Result<Arc<WeightFile>, Error> {
    let file = Arc::new(WeightFile {
        path,
        data: Snapshot::new(Weights::default()),
    });
    let mut last = None;
    match file.update(&mut last) {
        Ok(_) => ringdns_plugin::info!(
            "plugin/loadbalance: Successfully reloaded weight file {}",
            file.path.display()
        ),
        Err(LoadError::Open) if !reload.is_zero() => ringdns_plugin::warning!(
            "plugin/loadbalance: Failed to open weight file:{}. Will try again in {}",
            LoadError::Open,
            ringdns_plugin::duration::format(reload)
        ),
        Err(e) => return Err(d.plugin_err(LoadBalance::NAME, e)),
    }
    if !reload.is_zero() {
        let last = RefCell::new(last);
        poll_while(
            "ringdns-loadbalance",
            reload,
            &file,
            move |f: &WeightFile| match f.update(&mut last.borrow_mut()) {
                Ok(true) => ringdns_plugin::info!(
                    "plugin/loadbalance: Successfully reloaded weight file {}",
                    f.path.display()
                ),
                Ok(false) => {}
                Err(e) => ringdns_plugin::error!("plugin/loadbalance: {e}"),
            },
        )
        .map_err(|e| {
            d.plugin_err(
                LoadBalance::NAME,
                format_args!("cannot start the reload thread: {e}"),
            )
        })?;
    }
    Ok(file)
}

impl Serve for LoadBalance {
    fn build(config: &Arc<Config>, _core: &CoreInfo) -> Option<Self> {
        Some(LoadBalance {
            config: config.clone(),
            scratch: RefCell::new(Scratch::new(fastrand::Rng::new())),
        })
    }

    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        wrap::serve(self, req, next)
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        wrap::serve_now(self, req, next)
    }
}

impl Wrap for LoadBalance {
    type Before = ();

    fn before(&self, _req: &Request<'_>) -> Option<()> {
        Some(())
    }

    /// Reorders the reply the rest of the chain wrote, when it is a NOERROR reply and not
    /// a zone transfer's.
    fn after(&self, req: &mut Request<'_>, _: (), status: Status) -> Status {
        let qtype = req.query.qtype();
        // The reply to a signed query was signed by tsig, further in: reordered, its MAC
        // would fail.
        if !client_write(status.rcode)
            || header_rcode(req.reply) != Some(NOERROR)
            || qtype == AXFR
            || qtype == IXFR
            || req.query.has_tsig()
        {
            return status;
        }
        let max = req.max_reply_size();
        let guard;
        let policy = match &self.config.weights {
            Some(w) => {
                guard = w.data.load();
                Policy::Weighted(&guard)
            }
            None => Policy::RoundRobin,
        };
        let mut scratch = self.scratch.borrow_mut();
        rewrite::rewrite(
            req.reply,
            qtype,
            &policy,
            &self.config.options.prefer,
            &mut scratch,
            max,
        );
        status
    }
}

ringdns_plugin::export!(LoadBalance);

#[cfg(test)]
mod tests;
