//! cancel: gives up on a query the rest of the chain has not answered within a timeout
//! (5001 ms by default, a client's usual 5 s and a little), as CoreDNS's `plugin/cancel`
//! cancels the request's context. Nothing is sent for it: the client has given up by then,
//! and what the rest was waiting on (an upstream, a lookup) is dropped with it.
//!
//! Only a query that waits can take long: the passes that may not wait go through as they
//! came, and a deferred query's pass races the rest against a timer measured from the
//! query's arrival.

#![forbid(unsafe_code)]

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::wire::rcode::NOERROR;
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, Request, Serve, ServeFuture, Serves, Status,
    duration, next_or_failure, next_or_failure_now,
};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The directive, for errors.
const NAME: &str = "cancel";

/// CoreDNS's default: just past the 5 s after which DNS clients give up.
const DEFAULT: Duration = Duration::from_millis(5001);

/// What setup parsed: how long a query may take.
#[derive(Debug)]
pub struct Config {
    timeout: Duration,
}

/// The plugin's instance on one core.
pub struct Cancel {
    config: Arc<Config>,
}

impl Plugin for Cancel {
    const NAME: &'static str = NAME;
    type Config = Config;
    type Place = Serves;

    /// `cancel [TIMEOUT]`, a Go duration greater than zero. The last line of a block wins,
    /// as in CoreDNS.
    fn setup(d: &mut Dispenser<'_>, _block: &mut BlockSetup) -> Result<Config, Error> {
        let mut timeout = DEFAULT;
        while d.next() {
            let args = d.remaining_args();
            timeout = match args.as_slice() {
                [] => DEFAULT,
                [t] => match duration::parse_signed(t) {
                    Ok((false, d)) if !d.is_zero() => d,
                    Ok(_) => {
                        return Err(d.plugin_err(NAME, format!("invalid negative duration: {t:?}")));
                    }
                    Err(_) => return Err(d.plugin_err(NAME, format!("invalid duration: {t:?}"))),
                },
                _ => return Err(d.plugin_arg_err(NAME)),
            };
        }
        Ok(Config { timeout })
    }
}

impl Serve for Cancel {
    fn build(config: &Arc<Config>, _core: &CoreInfo) -> Option<Self> {
        Some(Cancel {
            config: config.clone(),
        })
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        next_or_failure_now(NAME, next, req)
    }

    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        if !req.can_wait() {
            // This pass cannot wait, so it cannot take long: a plugin that must wait defers.
            return ServeFuture::Next {
                fut: next_or_failure(NAME, next, req),
            };
        }
        let deadline = req.received() + self.config.timeout;
        ServeFuture::Own {
            fut: Box::pin(within(deadline, req, next)),
        }
    }
}

/// The rest of the chain, given up on at `deadline`: then nothing is written and nothing
/// is sent (CoreDNS's cancelled context, whose plugins return without writing).
async fn within<N: Handler>(deadline: Instant, req: &mut Request<'_>, next: &N) -> Status {
    let left = deadline.saturating_duration_since(Instant::now());
    let served = futures_lite::future::or(
        async { Some(next_or_failure(NAME, next, req).await) },
        async {
            ringdns_plugin::glommio::timer::sleep(left).await;
            None
        },
    )
    .await;
    match served {
        Some(Ok(status)) => status,
        Some(Err(_)) => Status::deferred_on_wait(NAME),
        None => {
            req.clear_reply();
            // "Written" with nothing written: the server sends nothing.
            Status::rcode(NOERROR)
        }
    }
}

ringdns_plugin::export!(Cancel);

#[cfg(test)]
mod tests {
    use super::*;
    use ringdns_testkit::config;

    fn timeout(text: &str) -> Result<Duration, String> {
        config::<Cancel>(text).map(|(_, c)| c.timeout)
    }

    #[test]
    fn setup_takes_a_positive_duration_defaulting_to_5001ms() {
        assert_eq!(timeout(". {\n cancel\n}\n"), Ok(DEFAULT));
        assert_eq!(timeout(". {\n cancel 1s\n}\n"), Ok(Duration::from_secs(1)));
        assert_eq!(
            timeout(". {\n cancel 1s\n cancel 250ms\n}\n"),
            Ok(Duration::from_millis(250))
        );
        let p = "Corefile:2 - Error during parsing: plugin/cancel: ";
        assert_eq!(
            timeout(". {\n cancel soon\n}\n"),
            Err(format!("{p}invalid duration: \"soon\""))
        );
        assert_eq!(
            timeout(". {\n cancel -1s\n}\n"),
            Err(format!("{p}invalid negative duration: \"-1s\""))
        );
        assert_eq!(
            timeout(". {\n cancel 0s\n}\n"),
            Err(format!("{p}invalid negative duration: \"0s\""))
        );
        assert!(
            timeout(". {\n cancel 1s 2s\n}\n")
                .unwrap_err()
                .contains("Wrong argument count")
        );
    }
}
