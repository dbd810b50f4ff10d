//! Health probes: after a failed exchange, one loop per upstream (process-wide) asks it an
//! `NS` question for the health-check domain every interval until it answers. Any reply,
//! even SERVFAIL, counts as alive, as in CoreDNS.

use super::config::UpstreamProto;
use super::{Inner, Rule, dial};
use futures_lite::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use ringdns_plugin::wire::{Header, Name, QueryBuilder, rtype};
use std::rc::Rc;
use std::time::Duration;

/// The probe's own read and write limit, as CoreDNS.
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// Starts the probe loop of upstream `ui` of line `ri`, unless one runs or `max_fails` is 0.
pub(super) fn start(inner: &Rc<Inner>, ri: usize, ui: usize) {
    let rule = inner.rules[ri].shared.clone();
    if rule.cfg.max_fails == 0
        || rule.cfg.health_check.interval.is_zero()
        || !rule.health[ui].claim_probe()
    {
        return;
    }
    let counters = inner.rules[ri].ups[ui].counters.clone();
    let weak = Rc::downgrade(inner);
    ringdns_plugin::glommio::spawn_local(async move {
        // The first probe goes at once (as CoreDNS), then one per interval until one answers.
        loop {
            if weak.upgrade().is_none() {
                // The configuration was replaced; its successor probes on its own.
                break;
            }
            if once(&rule, ui).await {
                rule.health[ui].success();
                break;
            }
            rule.health[ui].failure();
            counters.healthcheck_failures.inc();
            ringdns_plugin::glommio::timer::sleep(rule.cfg.health_check.interval).await;
        }
        rule.health[ui].release_probe();
    })
    .detach();
}

/// The probe query: `NS` for the health-check domain, RD unless `no_rec`. `None` only if
/// the domain were no wire name (setup made it with `name_to_wire`).
fn query(rule: &Rule, id: u16) -> Option<Vec<u8>> {
    let name = Name::from_wire(&rule.probe_name).ok()?;
    let rd = rule.cfg.health_check.recursion_desired;
    Some(QueryBuilder::new(name, rtype::NS).id(id).rd(rd).build())
}

/// A reply to the probe: any message with its ID.
fn has_id(reply: &[u8], id: u16) -> bool {
    Header::of(reply).is_some_and(|h| h.id() == id)
}

/// Asks once; true when any reply with the probe's ID comes back in time.
pub(super) async fn once(rule: &Rule, ui: usize) -> bool {
    let up = &rule.cfg.upstreams[ui];
    let id = fastrand::u16(..);
    let Some(q) = query(rule, id) else {
        return false;
    };
    match (up.proto, rule.cfg.force_tcp) {
        (UpstreamProto::Tls, _) => {
            let Some(tls) = &rule.tls else { return false };
            match dial::tls(
                up.addr,
                rule.cfg.source_address,
                PROBE_TIMEOUT,
                tls,
                up.tls_name.as_deref(),
            )
            .await
            {
                Ok(s) => stream(s, &q, id).await,
                Err(_) => false,
            }
        }
        (UpstreamProto::Dns, true) => {
            match dial::tcp(up.addr, rule.cfg.source_address, PROBE_TIMEOUT).await {
                Ok(s) => stream(s, &q, id).await,
                Err(_) => false,
            }
        }
        (UpstreamProto::Dns, false) => {
            let Ok(sock) = dial::udp(up.addr, rule.cfg.source_address) else {
                return false;
            };
            if sock.send(&q).await.is_err() {
                return false;
            }
            let _ = sock.set_read_timeout(Some(PROBE_TIMEOUT));
            let mut buf = [0u8; 512];
            matches!(sock.recv(&mut buf).await, Ok(n) if has_id(&buf[..n], id))
        }
    }
}

async fn stream<S: AsyncRead + AsyncWrite + Unpin>(mut s: S, q: &[u8], id: u16) -> bool {
    let exchange = async {
        let mut frame = (q.len() as u16).to_be_bytes().to_vec();
        frame.extend_from_slice(q);
        s.write_all(&frame).await?;
        s.flush().await?;
        let mut len = [0u8; 2];
        s.read_exact(&mut len).await?;
        let mut buf = vec![0u8; usize::from(u16::from_be_bytes(len))];
        s.read_exact(&mut buf).await?;
        Ok::<bool, std::io::Error>(has_id(&buf, id))
    };
    matches!(
        ringdns_plugin::glommio::timer::timeout(PROBE_TIMEOUT, async { Ok(exchange.await) }).await,
        Ok(Ok(true))
    )
}
