//! Read and write halves of one stream for a single-threaded executor: each half borrows the
//! stream only inside a poll, so a reader task and writers can share a TCP or TLS connection
//! without a lock.

use futures_lite::io::{AsyncRead, AsyncWrite};
use std::cell::RefCell;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

/// One half of a shared stream; both halves hold the same stream.
pub struct Half<S>(Rc<RefCell<S>>);

/// Splits a stream into a reading half and a writing half.
pub fn split<S>(stream: S) -> (Half<S>, Half<S>) {
    let s = Rc::new(RefCell::new(stream));
    (Half(s.clone()), Half(s))
}

impl<S: AsyncRead + Unpin> AsyncRead for Half<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut *self.0.borrow_mut()).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Half<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut *self.0.borrow_mut()).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0.borrow_mut()).poll_flush(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0.borrow_mut()).poll_close(cx)
    }
}
