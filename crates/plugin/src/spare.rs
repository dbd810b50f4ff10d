//! Byte buffers kept for reuse on one core: the query copies of deferred queries, the
//! replies sent by the reply sender, forward's upstream replies (in `plugin`, the layer both
//! the runtime and the plugins build on). A buffer handed back is cleared and kept (up to a
//! count, and not when it grew large), so the steady state of those paths allocates nothing.

use std::cell::RefCell;

/// How many buffers a pool keeps.
const MAX_KEPT: usize = 256;

/// A buffer that grew beyond this (a large TCP-sized answer) is freed, not kept.
const MAX_KEPT_CAPACITY: usize = 16 * 1024;

/// One pool of spare buffers (single-threaded: per core).
#[derive(Default)]
pub struct SpareBufs {
    bufs: RefCell<Vec<Vec<u8>>>,
}

impl SpareBufs {
    /// An empty buffer, a kept one when there is one.
    #[inline]
    pub fn take(&self) -> Vec<u8> {
        self.bufs.borrow_mut().pop().unwrap_or_default()
    }

    /// A buffer holding a copy of `bytes`.
    #[inline]
    pub fn copy_of(&self, bytes: &[u8]) -> Vec<u8> {
        let mut b = self.take();
        b.extend_from_slice(bytes);
        b
    }

    /// Hands a buffer back.
    #[inline]
    pub fn put(&self, mut buf: Vec<u8>) {
        let mut bufs = self.bufs.borrow_mut();
        if bufs.len() < MAX_KEPT && buf.capacity() <= MAX_KEPT_CAPACITY {
            buf.clear();
            bufs.push(buf);
        }
    }

    /// How many are kept now (for tests that check buffers come back).
    pub fn len(&self) -> usize {
        self.bufs.borrow().len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_come_back_cleared_and_large_ones_are_freed() {
        let pool = SpareBufs::default();
        let b = pool.copy_of(b"abc");
        assert_eq!(b, b"abc");
        pool.put(b);
        assert_eq!(pool.len(), 1);
        let b = pool.take();
        assert!(b.is_empty() && b.capacity() >= 3);
        assert!(pool.is_empty());
        pool.put(Vec::with_capacity(MAX_KEPT_CAPACITY + 1));
        assert!(pool.is_empty());
        for _ in 0..MAX_KEPT + 10 {
            pool.put(Vec::new());
        }
        assert_eq!(pool.len(), MAX_KEPT);
    }
}
