//! ready: an HTTP `/ready` endpoint that answers 200 `OK` once the server serves and until a
//! stop begins (503 during lameduck), for load balancers. Process-wide; the endpoint runs in
//! the runtime, off the query path.

use crate::corefile::{Dispenser, Error};
use crate::plugin::{BlockSetup, CoreInfo, Handler, Plugin, Request, Status, http_addr_arg};
use std::sync::Arc;

/// Configuration-only: records the address in the block setup.
pub struct Ready;

impl Plugin for Ready {
    const NAME: &'static str = "ready";
    type Config = ();

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<(), Error> {
        let mut seen = false;
        while d.next() {
            crate::plugin::once_per_block(d, &mut seen)?;
            let addr = http_addr_arg(d, Self::NAME, ":8181")?;
            if d.next_block() {
                return Err(d.err(&format!("plugin/ready: unknown property '{}'", d.val())));
            }
            block.ready = Some(addr);
        }
        Ok(())
    }

    fn build(_config: &Arc<()>, _core: &CoreInfo) -> Option<Self> {
        None
    }

    async fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Status {
        next.serve(req).await
    }
}
