//! The test kit for plugin crates (a dev-dependency): a plugin's setup run on a Corefile as
//! the server would run it, sample queries, and replies read back as text ([`reply`]).
//! Tests of the server itself, which start the real binary, live in the server package's
//! tests/.

#![forbid(unsafe_code)]

#[cfg(feature = "kubeapi")]
pub mod kubeapi;
#[cfg(feature = "mmdb")]
pub mod mmdb;
pub mod reply;

use ringdns_plugin::corefile::{Dispenser, parse};
use ringdns_plugin::wire::Query;
use ringdns_plugin::{
    BlockSetup, Handler, Outcome, Plugin, Request, Screen, ScreenLink, Serve, Status,
};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// Runs plugin `P`'s setup on the first directive of a one-block Corefile `text`, for a
/// plugin's tests of what setup leaves in the block, or of its `FILE:LINE - message`.
pub fn setup<P: Plugin>(text: &str) -> Result<BlockSetup, String> {
    config::<P>(text).map(|(block, _)| block)
}

/// [`setup`], with the configuration the plugin parsed.
pub fn config<P: Plugin>(text: &str) -> Result<(BlockSetup, P::Config), String> {
    config_in::<P>(text, BlockSetup::default())
}

/// [`config`] with the block's zones set from its keys as the server sets them
/// (normalised, CIDR keys as their reverse zones), for a plugin whose setup reads the
/// block's zones (its default zones, loop's probed zone).
pub fn config_with_zones<P: Plugin>(text: &str) -> Result<(BlockSetup, P::Config), String> {
    let cf = parse("Corefile", text, &|n| n == P::NAME).map_err(|e| e.to_string())?;
    let mut zones = Vec::new();
    for k in cf.blocks.first().map_or(&[][..], |b| &b.keys[..]) {
        zones.extend(ringdns_plugin::normalize::normalize_exact(&k.text)?);
    }
    config_in::<P>(
        text,
        BlockSetup {
            zones,
            ..BlockSetup::default()
        },
    )
}

/// Runs `P`'s setup on the first directive of `text`'s first block, in `block`.
fn config_in<P: Plugin>(
    text: &str,
    mut block: BlockSetup,
) -> Result<(BlockSetup, P::Config), String> {
    let cf = parse("Corefile", text, &|n| n == P::NAME).map_err(|e| e.to_string())?;
    let directive = cf
        .blocks
        .first()
        .and_then(|b| b.directives.first())
        .ok_or_else(|| format!("the Corefile has no '{}' directive", P::NAME))?;
    let mut d = Dispenser::new(&directive.tokens);
    let config = P::setup(&mut d, &mut block).map_err(|e| e.to_string())?;
    Ok((block, config))
}

/// One block as [`blocks`] sets it up: what setup left in it, and `P`'s configuration when
/// the block uses `P`.
pub type Block<P> = (BlockSetup, Option<<P as Plugin>::Config>);

/// Runs plugin `P`'s setup on the first directive of every block of Corefile `text`, with
/// one [`ConfigShared`](ringdns_plugin::ConfigShared) for all of them as the server's load
/// gives them, for tests of what a plugin keeps across blocks (health's one lameduck,
/// ready's one monitor mode). A block without `P`'s directive gets an untouched setup.
pub fn blocks<P: Plugin>(text: &str) -> Result<Vec<Block<P>>, String> {
    let cf = parse("Corefile", text, &|n| n == P::NAME).map_err(|e| e.to_string())?;
    let shared = ringdns_plugin::ConfigShared::default();
    let mut out = Vec::new();
    for b in &cf.blocks {
        let mut block = BlockSetup {
            config_shared: shared.clone(),
            ..BlockSetup::default()
        };
        let config = match b.directives.iter().find(|d| d.name == P::NAME) {
            Some(directive) => {
                let mut d = Dispenser::new(&directive.tokens);
                Some(P::setup(&mut d, &mut block).map_err(|e| e.to_string())?)
            }
            None => None,
        };
        out.push((block, config));
    }
    Ok(out)
}

/// A query for `example. A IN`, ID 0x1234, RD set: what a test sends when the question
/// does not matter.
pub const QUERY: &[u8] = &[
    0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 7, b'e', b'x', b'a', b'm', b'p', b'l', b'e', 0,
    0, 1, 0, 1,
];

/// A presentation name in wire form with its case kept, as a query carries it
/// (`wire::name_to_wire` lower-cases, for configuration). No escapes: test names only.
pub fn wire_name(name: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for l in name
        .trim_end_matches('.')
        .split('.')
        .filter(|l| !l.is_empty())
    {
        out.push(l.len() as u8);
        out.extend_from_slice(l.as_bytes());
    }
    out.push(0);
    out
}

/// A directory of a test's own under the system's temp dir, removed with its contents
/// when dropped, so that a test, passing or failing, leaves nothing behind.
pub struct TempDir(PathBuf);

impl TempDir {
    /// A new empty directory; `tag` is in its name, for whoever looks meanwhile.
    pub fn new(tag: &str) -> TempDir {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("ringdns-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create a temp dir");
        TempDir(p)
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A next plugin for a plugin's tests: answers nothing and returns its rcode, so a test
/// that sees that rcode knows the query reached the next plugin (as CoreDNS's tests'
/// `NextHandler` returns a code of its own).
pub struct Next(pub u8);

impl Handler for Next {
    async fn serve(&self, _req: &mut Request<'_>) -> Outcome {
        Ok(Status::rcode(self.0))
    }

    fn serve_now(&self, _req: &mut Request<'_>) -> Option<Status> {
        Some(Status::rcode(self.0))
    }

    fn is_end(&self) -> bool {
        false
    }

    fn after_batch(&self) {}
}

/// A request for `packet` from `client` over UDP, in block `.` of listener `dns://:53`,
/// its reply going into `reply`; `can_wait` for a deferred pass (which may wait).
pub fn udp_request<'a>(
    packet: &'a [u8],
    client: SocketAddr,
    reply: &'a mut Vec<u8>,
    can_wait: bool,
) -> Request<'a> {
    let q = Query::parse(packet).expect("a test's query parses");
    Request::new(
        q,
        client,
        client,
        ringdns_plugin::Proto::Udp,
        ".",
        "dns://:53",
        reply,
        can_wait,
    )
}

/// Serves `packet` from `client` (UDP, block `.`) with `plugin` before [`Next`]`(next)`:
/// inline when `at_once` (`serve_now`, which must answer), else through `serve` polled
/// once (which must not wait). The status and the reply written. What a plugin's tests
/// compare between the two passes.
pub fn serve_once<S: Serve>(
    plugin: &S,
    packet: &[u8],
    client: SocketAddr,
    next: u8,
    at_once: bool,
) -> (Status, Vec<u8>) {
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};
    let mut reply = Vec::new();
    let mut req = udp_request(packet, client, &mut reply, false);
    let next = Next(next);
    let status = if at_once {
        plugin
            .serve_now(&mut req, &next)
            .expect("the plugin answers on the inline pass")
    } else {
        let fut = pin!(plugin.serve(&mut req, &next));
        match fut.poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(Ok(s)) => s,
            other => panic!("the plugin waited: {:?}", other.is_ready()),
        }
    };
    (status, reply)
}

/// Serves `req` through `chain` (a link and the rest, as the server holds them): inline when
/// `at_once` (`serve_now`, which must answer), else through `serve` polled once (which must
/// not wait). What a plugin's tests compare between the two passes.
pub fn chain_once<H: Handler>(chain: &H, req: &mut Request<'_>, at_once: bool) -> Status {
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};
    if at_once {
        return chain
            .serve_now(req)
            .expect("the chain answers on the inline pass");
    }
    match pin!(chain.serve(req)).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(Ok(s)) => s,
        other => panic!("the chain waited: {:?}", other.is_ready()),
    }
}

/// [`serve_once`] for a [`Screen`] plugin, through its link in front of
/// [`Next`]`(next)` as the chain holds it ([`chain_once`]).
pub fn screen_once<S: Screen>(
    plugin: S,
    packet: &[u8],
    client: SocketAddr,
    next: u8,
    at_once: bool,
) -> (Status, Vec<u8>) {
    let mut reply = Vec::new();
    let mut req = udp_request(packet, client, &mut reply, false);
    let link = ScreenLink {
        plugin: Some(plugin),
        rest: Next(next),
    };
    let status = chain_once(&link, &mut req, at_once);
    (status, reply)
}

#[doc(hidden)]
pub use ringdns_plugin as __plugin;

/// Makes a test's stand-in for the rest of the chain a `Handler` from its method
/// `fn METHOD(&self, &mut Request<'_>) -> Status`: the same answer at once, inline and on the
/// deferred pass, so that a plugin's tests write only what the rest answers.
#[macro_export]
macro_rules! rest_of_chain {
    ($ty:ty, $method:ident) => {
        impl $crate::__plugin::Handler for $ty {
            async fn serve(
                &self,
                req: &mut $crate::__plugin::Request<'_>,
            ) -> $crate::__plugin::Outcome {
                Ok(self.$method(req))
            }

            fn serve_now(
                &self,
                req: &mut $crate::__plugin::Request<'_>,
            ) -> Option<$crate::__plugin::Status> {
                Some(self.$method(req))
            }

            fn is_end(&self) -> bool {
                false
            }

            fn after_batch(&self) {}
        }
    };
}

#[cfg(test)]
mod tests {
    use super::TempDir;

    #[test]
    fn temp_dirs_are_their_own_and_go_away() {
        let (a, b) = (TempDir::new("t"), TempDir::new("t"));
        assert_ne!(a.path(), b.path());
        std::fs::create_dir_all(a.path().join("sub")).unwrap();
        std::fs::write(a.path().join("sub/f"), "x").unwrap();
        let p = a.path().to_path_buf();
        drop(a);
        assert!(!p.exists());
        assert!(b.path().is_dir());
    }
}
