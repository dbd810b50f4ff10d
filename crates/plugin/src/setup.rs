//! What plugin setup sees of the block it configures, and what an instance knows of its core.

use crate::http::{HttpEndpoint, HttpRequest, HttpResponse};
use crate::shared::ConfigShared;
use crate::shutdown::{ShutdownHook, Stopping};
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

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
    /// `view NAME`: the block is one of several for a zone and port, chosen per query by its
    /// plugins' [`crate::Handler::admits`]; the name labels its metrics. Set by view's setup,
    /// which plugin.cfg runs before every plugin that reads it (prometheus).
    pub view: Option<String>,
    /// `multisocket N`: the socket pairs each of the block's listeners opens, spread over
    /// the cores; `None`, one per core. The first block of a listener decides, as CoreDNS's.
    pub sockets: Option<usize>,
    /// `timeouts`: the block's TCP limits, when it sets them.
    pub tcp_timeouts: Option<TcpTimeouts>,
    /// The block's plugins that report readiness (see [`super::Plugin::readiness`]), known
    /// once every setup of the block ran: a setup (ready's) keeps the `Arc` and reads it
    /// later, when `/ready` is asked.
    pub readiness: Arc<OnceLock<Vec<std::sync::Weak<dyn super::Readiness>>>>,
    /// `proxyproto`: the PROXY protocol settings of the block's listeners, when it sets
    /// them (the last block on a listener that does wins, as in CoreDNS).
    pub proxy_protocol: Option<crate::ProxyProtocol>,
    /// `reload`: how often to look for a changed Corefile.
    pub reload: Option<ReloadSettings>,
    /// The compiled plugins whose directives the block uses, in plugin.cfg order; filled
    /// before any setup runs (e.g. the plugins that may write a reply, for metrics labels).
    pub directives: Vec<&'static str>,
    /// The (server, zone) pairs the block answers for (`dns://:53`, `example.org.`), as
    /// metrics label them. Known only once every block's listeners are grouped, after
    /// setup: a setup keeps the `Arc` and its `build` reads it.
    pub routes: Arc<OnceLock<Vec<(String, String)>>>,
    /// The plugins present in the block's chain (those whose `build` gives an instance),
    /// outermost first; filled when the first core builds the chain.
    pub handlers: Arc<OnceLock<Vec<&'static str>>>,
    /// The HTTP endpoints the block's plugins registered ([`BlockSetup::http_endpoint`]).
    pub http: Vec<HttpEndpoint>,
    /// What the block's plugins do when the server stops ([`BlockSetup::on_shutdown`]);
    /// the server runs them, block after block, when a stop begins.
    pub shutdown: Vec<ShutdownHook>,
    /// The state this configuration's setups share across blocks ([`BlockSetup::shared`]);
    /// the server gives every block of one load the same, and each load a new one.
    pub config_shared: ConfigShared,
    /// The state this block's setups share ([`BlockSetup::block_shared`]); each block of
    /// each load gets a new one.
    pub block_shared: ConfigShared,
}

/// How often the `reload` plugin re-reads the Corefile: every `interval`, shifted by a random
/// amount within ±`jitter`/2 so that many servers started together do not reload together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReloadSettings {
    /// The check period (at least 2 s).
    pub interval: std::time::Duration,
    /// The spread of the random shift (at least 1 s, at most `interval`/2).
    pub jitter: std::time::Duration,
}

/// How long a TCP connection may take to send its first query, to send each next one, and
/// to take a reply, and how many queries it may send (CoreDNS's `timeouts` plugin).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpTimeouts {
    /// Wait for the first query of a connection (default 3 s).
    pub read: std::time::Duration,
    /// Wait for a reply to be written (default 5 s).
    pub write: std::time::Duration,
    /// Wait for each later query (default 10 s).
    pub idle: std::time::Duration,
    /// Queries allowed per connection before it is closed; `None` = no limit (default).
    pub max_queries: Option<u64>,
}

impl Default for TcpTimeouts {
    fn default() -> Self {
        TcpTimeouts {
            read: std::time::Duration::from_secs(3),
            write: std::time::Duration::from_secs(5),
            idle: std::time::Duration::from_secs(10),
            max_queries: None,
        }
    }
}

impl BlockSetup {
    /// Registers an HTTP endpoint: `path` on `addr`, answered by `handler` on the
    /// address's HTTP thread, off the query path (see [`crate::http`] for how endpoints
    /// share addresses and live through reloads). health, ready and prometheus serve
    /// `/health`, `/ready` and `/metrics` this way. `path` starts with `/`.
    pub fn http_endpoint(
        &mut self,
        addr: SocketAddr,
        path: impl Into<String>,
        handler: impl Fn(&HttpRequest<'_>) -> HttpResponse + Send + Sync + 'static,
    ) {
        self.http.push(HttpEndpoint {
            addr,
            path: path.into(),
            handler: Arc::new(handler),
            plugin: "",
        });
    }

    /// Registers what this plugin does when the server stops (CoreDNS's `OnShutdown`): it
    /// runs on the main thread after `/ready` went to 503 and before the listeners close,
    /// while DNS and the HTTP endpoints still serve, and may wait there
    /// ([`Stopping::serve_for`], health's lameduck). Only the running configuration's hooks
    /// run; a reload replaces them with the new configuration's.
    pub fn on_shutdown(&mut self, hook: impl Fn(&Stopping<'_>) + Send + Sync + 'static) {
        self.shutdown.push(ShutdownHook::new(hook));
    }

    /// The value of type `T` that every block of this configuration shares (made with
    /// `T::default()` by the first setup that asks), for what a plugin keeps process-wide:
    /// ready's one monitor mode, health's longest lameduck. A reload's setups get new ones.
    pub fn shared<T: Default + Send + Sync + 'static>(&self) -> Arc<T> {
        self.config_shared.get()
    }

    /// The value of type `T` that the plugins of this block share (made with `T::default()`
    /// by the first setup that asks): how plugins of one block find each other's data, as
    /// transfer finds the zones of file, auto and secondary.
    pub fn block_shared<T: Default + Send + Sync + 'static>(&self) -> Arc<T> {
        self.block_shared.get()
    }

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

/// An HTTP listen address as CoreDNS's plugins take it: `host:port`, `:port` (all
/// addresses) or `localhost:port`.
pub fn http_listen_addr(text: &str) -> Result<SocketAddr, String> {
    let full = if text.starts_with(':') {
        format!("0.0.0.0{text}")
    } else {
        text.to_string()
    };
    full.to_socket_addrs()
        .map_err(|e| format!("invalid address '{text}': {e}"))?
        .next()
        .ok_or_else(|| format!("invalid address '{text}'"))
}

/// The optional ADDRESS argument of an HTTP endpoint directive (`health`, `ready`): none
/// means `default`; more than one is an argument error. Errors name the plugin.
pub fn http_addr_arg(
    d: &mut crate::corefile::Dispenser<'_>,
    plugin: &str,
    default: &str,
) -> Result<SocketAddr, crate::corefile::Error> {
    let args = d.remaining_args();
    let text = match args.as_slice() {
        [] => default,
        [a] => a.as_str(),
        _ => return Err(d.arg_err()),
    };
    http_listen_addr(text).map_err(|e| d.err(&format!("plugin/{plugin}: {e}")))
}
