//! A plugin's serving future without an `async fn`: an `async fn serve` keeps its arguments
//! beside the future it awaits, and the chain's future (every plugin's nested in the one
//! before) is built and moved into place for every deferred query; tests/alloc.rs keeps it
//! within 2 KiB. A plugin that decides first and then either answers, hands on, or does
//! one wait of its own returns this instead.

use crate::{Outcome, Status};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

pin_project_lite::pin_project! {
    /// An answer already decided, the next plugin's future, or the plugin's own wait.
    #[project = ServeFutureProj]
    pub enum ServeFuture<A, B> {
        /// Decided on the spot.
        Ready { outcome: Option<Outcome> },
        /// The rest of the chain serves.
        Next { #[pin] fut: A },
        /// The plugin's own wait (a lookup, a transfer), which ends served.
        Own { #[pin] fut: B },
    }
}

impl<A, B> ServeFuture<A, B> {
    /// The future of an outcome decided now.
    pub const fn ready(outcome: Outcome) -> Self {
        ServeFuture::Ready {
            outcome: Some(outcome),
        }
    }
}

impl<A: Future<Output = Outcome>, B: Future<Output = Status>> Future for ServeFuture<A, B> {
    type Output = Outcome;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        match self.project() {
            ServeFutureProj::Ready { outcome } => {
                Poll::Ready(outcome.take().expect("polled after completion"))
            }
            ServeFutureProj::Next { fut } => fut.poll(cx),
            ServeFutureProj::Own { fut } => fut.poll(cx).map(Ok),
        }
    }
}
