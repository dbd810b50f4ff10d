//! Opening sockets to an upstream: connected UDP sockets on random source ports, TCP
//! connections (from `source_address` when set), and TLS on top of TCP.

use futures_rustls::TlsConnector;
use futures_rustls::client::TlsStream;
use ringdns_plugin::glommio::net::{TcpStream, UdpSocket};
use rustls::pki_types::ServerName;
use socket2_04::{Domain, Protocol, Socket, Type};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// The local address to bind before connecting: `source_address` or the wildcard of the
/// upstream's family, port 0 so the kernel picks a random source port.
fn local_for(upstream: SocketAddr, source: Option<IpAddr>) -> SocketAddr {
    let ip = source.unwrap_or(match upstream {
        SocketAddr::V4(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        SocketAddr::V6(_) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
    });
    SocketAddr::new(ip, 0)
}

/// A UDP socket connected to `upstream`, so the kernel delivers only its replies.
pub fn udp(upstream: SocketAddr, source: Option<IpAddr>) -> io::Result<UdpSocket> {
    let s = Socket::new(
        Domain::for_address(upstream),
        Type::DGRAM,
        Some(Protocol::UDP),
    )?;
    s.set_nonblocking(true)?;
    s.bind(&local_for(upstream, source).into())?;
    s.connect(&upstream.into())?;
    Ok(UdpSocket::from(s))
}

/// A TCP connection to `upstream`, within `timeout`.
pub async fn tcp(
    upstream: SocketAddr,
    source: Option<IpAddr>,
    timeout: Duration,
) -> io::Result<TcpStream> {
    let stream = match source {
        None => TcpStream::connect_timeout(upstream, timeout)
            .await
            .map_err(io::Error::from)?,
        Some(_) => {
            // glommio cannot bind before connecting: start a non-blocking connect from the
            // source address; the first write waits until it completes.
            let s = Socket::new(
                Domain::for_address(upstream),
                Type::STREAM,
                Some(Protocol::TCP),
            )?;
            s.set_nonblocking(true)?;
            s.bind(&local_for(upstream, source).into())?;
            match s.connect(&upstream.into()) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
                Err(e) => return Err(e),
            }
            TcpStream::from(s)
        }
    };
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

/// A TLS connection to `upstream`, verified against `name` (or its IP address).
pub async fn tls(
    upstream: SocketAddr,
    source: Option<IpAddr>,
    timeout: Duration,
    config: &Arc<rustls::ClientConfig>,
    name: Option<&str>,
) -> io::Result<TlsStream<TcpStream>> {
    let tcp = tcp(upstream, source, timeout).await?;
    let server_name = match name {
        Some(n) => ServerName::try_from(n.to_string())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?,
        None => ServerName::IpAddress(upstream.ip().into()),
    };
    let connect = TlsConnector::from(config.clone()).connect(server_name, tcp);
    match ringdns_plugin::glommio::timer::timeout(timeout, async { Ok(connect.await) }).await {
        Ok(r) => r,
        Err(_) => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "TLS handshake timed out",
        )),
    }
}
