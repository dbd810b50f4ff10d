//! The PROXY header at the start of a connection on a listener with `proxyproto`, read
//! before any DNS framing into the connection's own frame buffer (the bytes after it stay
//! there for the first message), by one deadline for the whole header.

use super::super::proxy::{self, Stream, header};
use super::super::stop::Stop;
use super::frames::FrameReader;
use crate::plugin::ProxyPolicy;
use glommio::net::TcpStream;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// The client plugins see on this connection from `peer` under `policy` (not `skip`), or
/// `None` when the connection is to be closed: an invalid header, a rejected one, or no
/// bytes that could tell within `within` (or before the stop, or the peer's close).
pub async fn client(
    frames: &mut FrameReader,
    stream: &mut TcpStream,
    (policy, peer): (ProxyPolicy, SocketAddr),
    within: Duration,
    stop: &Stop,
) -> Option<SocketAddr> {
    let deadline = Instant::now() + within;
    loop {
        let found = header::find(frames.pending(), false);
        match proxy::stream(found, policy, peer) {
            Some(Stream::Serve { skip, client }) => {
                frames.skip(skip);
                return Some(client);
            }
            Some(Stream::Close) => return None,
            None => {
                let header::Found::More(want) = found else {
                    return None;
                };
                frames.fill(stream, want, deadline, stop).await.ok()?;
            }
        }
    }
}
