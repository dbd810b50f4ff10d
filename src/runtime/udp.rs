//! The UDP loop of one listener on one core: receive a batch, serve each query inline,
//! flush the plugins' per-batch work, send the batch; deferred queries become tasks. Between
//! batches the loop picks up a reloaded configuration (see `swap`).

use super::backend::{Backend, DatagramBackend};
use super::batch::Batch;
use super::deferred::DeferredPool;
use super::replies::{self, ReplyQueue};
use super::serve::{Verdict, serve_inline, spawn_refreshes};
use super::stop::Stop;
use super::swap::View;
use crate::plugin::{Handler, Proto};
use glommio::net::UdpSocket;
use std::cell::Cell;
use std::io;
use std::rc::Rc;

thread_local! {
    static SEND_ERRORS: Cell<u64> = const { Cell::new(0) };
}

/// Counts a reply that could not be sent, and logs the first of each thousand.
pub fn note_send_error(e: &io::Error) {
    SEND_ERRORS.with(|c| {
        let n = c.get();
        c.set(n + 1);
        if n % 1000 == 0 {
            crate::error!("udp send failed ({} so far on this core): {e}", n + 1);
        }
    });
}

/// Serves the listener of `view` until `stop` is given (at shutdown, or when a reload
/// removes the listener).
pub async fn run<H: Handler + 'static>(
    mut view: View<H>,
    mut backend: Backend,
    sock: Rc<UdpSocket>,
    batch_size: usize,
    stop: Rc<Stop>,
    core_index: usize,
) {
    let counters: std::sync::Arc<crate::metrics::udp::UdpCounters> =
        crate::metrics::registry::cell(&[&view.core.listeners[view.li].name], core_index);
    let mut batch = Batch::new(batch_size);
    let queue = Rc::new(ReplyQueue::default());
    let sender = glommio::spawn_local(replies::sender(queue.clone(), sock.clone()));
    let pool = DeferredPool::new(queue.clone());
    loop {
        let received =
            futures_lite::future::or(async { Some(backend.recv(&mut batch).await) }, async {
                stop.wait().await;
                None
            })
            .await;
        let n = match received {
            None => break,
            Some(Ok(n)) => n,
            Some(Err(e)) => {
                crate::error!("udp receive on {}: {e}", view.core.listeners[view.li].name);
                glommio::timer::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            }
        };
        counters.received(n);
        view.refresh();
        let (core, li) = (&view.core, view.li);
        let l = &core.listeners[li];
        let time = crate::plugin::clock::BatchTime::start();
        for slot in &mut batch.slots[..n] {
            let packet = &slot.buf[..slot.len];
            slot.send = match serve_inline(
                core,
                l,
                packet,
                slot.truncated,
                slot.peer,
                Proto::Udp,
                &mut slot.reply,
            ) {
                Verdict::Send => true,
                Verdict::Drop => false,
                Verdict::Defer(note) => {
                    pool.submit(core, li, packet, slot.peer, note);
                    false
                }
            };
        }
        drop(time);
        core.after_batch();
        backend.send(&mut batch, n).await;
        spawn_refreshes(&view.core);
        if stop.is_set() {
            break;
        }
    }
    // Deferred queries still being served push their replies after this: wait for them,
    // then let the sender finish.
    pool.close();
    let t0 = std::time::Instant::now();
    while pool.pending() > 0 && t0.elapsed() < super::DRAIN {
        glommio::timer::sleep(std::time::Duration::from_millis(5)).await;
    }
    queue.close();
    sender.await;
}
