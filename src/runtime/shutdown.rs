//! The start of a stop: the running configuration's shutdown hooks, which the plugins
//! registered in setup (`BlockSetup::on_shutdown`), run on the main thread after `/ready`
//! went to 503 and before the cores are told to stop, so DNS and the HTTP endpoints still
//! serve while they run (health's lameduck waits there).

use crate::config::Config;
use crate::plugin::Stopping;

/// Runs every block's shutdown hooks in Corefile order (plugin.cfg order within a block);
/// `graceful` for SIGTERM, `cut` true once their waits must end (SIGINT, a core that ended).
pub fn run_hooks(config: &Config, graceful: bool, cut: &dyn Fn() -> bool) {
    let stopping = Stopping::new(graceful, cut);
    for hook in config.blocks.iter().flat_map(|b| &b.setup.shutdown) {
        hook.run(&stopping);
    }
}
