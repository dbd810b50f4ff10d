//! What plugin setup sees of the block it configures, and what an instance knows of its core.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// Block-wide settings that config-only directives (root, bind, debug, …) record and other
/// plugins and the server read. One per server block, filled in plugin.cfg order.
#[derive(Debug, Clone, Default)]
pub struct BlockSetup {
    /// The block's zones (lower-case FQDN, after reverse expansion), in key order; plugins
    /// default their own zone lists to these, as CoreDNS's `ServerBlockKeys`.
    pub zones: Vec<String>,
    /// Base directory for relative paths (`root`); empty means the working directory.
    pub root: PathBuf,
    /// Addresses to listen on (`bind`); empty means the wildcard.
    pub bind: Vec<IpAddr>,
    /// Whether `bind` appeared, so an empty list after `except` is an error, not a wildcard.
    pub bind_set: bool,
    /// `debug`: panics are not recovered.
    pub debug: bool,
    /// `errors { stacktrace }`: a recovered panic is logged with its backtrace.
    pub stacktrace: bool,
    /// CH-class queries are allowed on this block's listeners (chaos, forward).
    pub allow_chaos: bool,
}

impl BlockSetup {
    /// A path from the Corefile, made absolute against `root` when it is relative.
    pub fn resolve_path(&self, path: &str) -> PathBuf {
        let p = Path::new(path);
        if p.is_absolute() || self.root.as_os_str().is_empty() {
            p.to_path_buf()
        } else {
            self.root.join(p)
        }
    }
}

/// Which core an instance is built for, so per-core state can be sized and named.
#[derive(Debug, Clone, Copy)]
pub struct CoreInfo {
    /// 0-based index among the server's cores.
    pub index: usize,
    /// The CPU the core's executor is pinned to.
    pub cpu: usize,
    /// How many cores serve.
    pub cores: usize,
}
