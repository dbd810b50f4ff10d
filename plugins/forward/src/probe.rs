//! Health probes: after a failed exchange, one loop per upstream (process-wide) asks it an
//! `NS` question for the health-check domain every interval until it answers. Any reply,
//! even SERVFAIL, counts as alive, as in CoreDNS.

use super::config::UpstreamProto;
use super::{Inner, Rule, dial};
use futures_lite::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
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

/// The probe query: `NS` for the health-check domain, RD unless `no_rec`.
fn query(rule: &Rule, id: u16) -> Vec<u8> {
    let mut q = Vec::with_capacity(16 + rule.probe_name.len());
    q.extend_from_slice(&id.to_be_bytes());
    q.extend_from_slice(if rule.cfg.health_check.recursion_desired {
        &[1, 0]
    } else {
        &[0, 0]
    });
    q.extend_from_slice(&[0, 1, 0, 0, 0, 0, 0, 0]);
    q.extend_from_slice(&rule.probe_name);
    q.extend_from_slice(&[0, 2, 0, 1]);
    q
}

/// Asks once; true when any reply with the probe's ID comes back in time.
pub(super) async fn once(rule: &Rule, ui: usize) -> bool {
    let up = &rule.cfg.upstreams[ui];
    let id = fastrand::u16(..);
    let q = query(rule, id);
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
            matches!(sock.recv(&mut buf).await, Ok(n) if n >= 12 && buf[0..2] == id.to_be_bytes())
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
        Ok::<bool, std::io::Error>(buf.len() >= 12 && buf[0..2] == id.to_be_bytes())
    };
    matches!(
        ringdns_plugin::glommio::timer::timeout(PROBE_TIMEOUT, async { Ok(exchange.await) }).await,
        Ok(Ok(true))
    )
}
