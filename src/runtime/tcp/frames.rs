//! Length-prefixed DNS messages read from a TCP connection (RFC 7766 §8), each under one
//! deadline for the whole message, whatever arrives in between: a client that trickles a
//! byte at a time cannot keep its connection past it (CoreDNS's server, through Go's
//! `SetReadDeadline`, does the same). The buffer starts small and grows only for a message
//! that needs it (given back past 4 KiB), so an idle connection holds 2 KiB, not a 64 KiB
//! frame.

use super::super::stop::Stop;
use futures_lite::AsyncReadExt;
use glommio::net::TcpStream;
use std::time::{Duration, Instant};

/// What a connection's buffer holds when it has no message in it. Pipelined queries of
/// about 50 bytes each: a read takes up to ~40 of them at once.
const INITIAL: usize = 2048;

/// A buffer grown past this by a large message is given back once that message is served.
const KEEP_AT_MOST: usize = 2 * INITIAL;

/// Bytes buffered are moved to the front rather than read after with less room than this.
const MIN_READ: usize = 512;

/// Why no message came.
#[derive(Debug, PartialEq, Eq)]
pub enum NoMessage {
    /// The client closed the connection (or the table evicted it) with no partial message.
    Closed,
    /// The deadline passed, a read failed, or the stream ended in the middle of a message.
    Broken,
    /// The server is stopping.
    Stopped,
}

/// The read side of one connection: bytes received and not yet served.
pub struct FrameReader {
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl Default for FrameReader {
    fn default() -> Self {
        FrameReader {
            buf: vec![0; INITIAL],
            start: 0,
            end: 0,
        }
    }
}

impl FrameReader {
    /// The length of the whole message at the front of the buffer, if it is all there.
    fn buffered(&self) -> Option<usize> {
        let have = &self.buf[self.start..self.end];
        let n = usize::from(u16::from_be_bytes([*have.first()?, *have.get(1)?]));
        (have.len() >= 2 + n).then_some(n)
    }

    /// Whether a whole message is buffered already (a pipelining client's next query).
    pub fn has_message(&self) -> bool {
        self.buffered().is_some()
    }

    /// Reads until a whole message is buffered and returns it; the caller calls
    /// [`FrameReader::consume`] once it has served it. Fails once `within` has passed since
    /// it first had to read (a message already buffered costs no clock read).
    pub async fn next(
        &mut self,
        stream: &mut TcpStream,
        within: Duration,
        stop: &Stop,
    ) -> Result<&[u8], NoMessage> {
        let mut deadline = None;
        loop {
            if let Some(n) = self.buffered() {
                return Ok(&self.buf[self.start + 2..self.start + 2 + n]);
            }
            self.make_room();
            let now = Instant::now();
            let left = deadline
                .get_or_insert(now + within)
                .saturating_duration_since(now);
            self.read_once(stream, left, stop).await?;
        }
    }

    /// The bytes received and not yet consumed: before the first message, what a PROXY
    /// header is looked for in.
    pub fn pending(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Drops the first `n` bytes received (a PROXY header).
    pub fn skip(&mut self, n: usize) {
        self.start += n.min(self.end - self.start);
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        }
    }

    /// Reads once, by `deadline`, with room for `want` bytes received in all (a PROXY
    /// header that is not whole yet; at most 16 + 65 535 bytes).
    pub async fn fill(
        &mut self,
        stream: &mut TcpStream,
        want: usize,
        deadline: Instant,
        stop: &Stop,
    ) -> Result<(), NoMessage> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            (self.start, self.end) = (0, self.end - self.start);
        }
        if want > self.buf.len() {
            self.buf.resize(want, 0);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        self.read_once(stream, left, stop).await
    }

    /// One read into the room after `end`, within `left` or until the stop.
    async fn read_once(
        &mut self,
        stream: &mut TcpStream,
        left: Duration,
        stop: &Stop,
    ) -> Result<(), NoMessage> {
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return Err(NoMessage::Broken);
        }
        let read = futures_lite::future::or(
            async { Some(stream.read(&mut self.buf[self.end..]).await) },
            async {
                stop.wait().await;
                None
            },
        )
        .await;
        match read {
            None => Err(NoMessage::Stopped),
            Some(Ok(0)) if self.end == self.start => Err(NoMessage::Closed),
            Some(Ok(0)) | Some(Err(_)) => Err(NoMessage::Broken),
            Some(Ok(got)) => {
                self.end += got;
                Ok(())
            }
        }
    }

    /// Drops the message [`FrameReader::next`] returned, and gives back a buffer that a large
    /// message grew once nothing is left in it.
    pub fn consume(&mut self) {
        if let Some(n) = self.buffered() {
            self.start += 2 + n;
        }
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
            if self.buf.len() > KEEP_AT_MOST {
                self.buf = vec![0; INITIAL];
            }
        }
    }

    /// Space after `end` for the rest of the message at the front (as far as its length is
    /// known), moving what is buffered to the front or growing the buffer if needed.
    fn make_room(&mut self) {
        let have = self.end - self.start;
        let need = match self.buf[self.start..self.end] {
            [a, b, ..] => 2 + usize::from(u16::from_be_bytes([a, b])),
            _ => 2,
        };
        if self.start > 0
            && (self.start + need > self.buf.len() || self.buf.len() - self.end < MIN_READ)
        {
            self.buf.copy_within(self.start..self.end, 0);
            (self.start, self.end) = (0, have);
        }
        if need > self.buf.len() {
            self.buf.resize(need, 0);
        }
    }

    /// The buffer's size (for tests of what an idle connection holds).
    #[cfg(test)]
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glommio::net::TcpListener;
    use std::io::Write;
    use std::time::Duration;

    fn frame(len: usize, fill: u8) -> Vec<u8> {
        let mut f = (len as u16).to_be_bytes().to_vec();
        f.resize(2 + len, fill);
        f
    }

    /// Runs `check` on the server side of a connection whose client sends `chunks`, each
    /// after `gap`.
    fn with_client(
        chunks: Vec<Vec<u8>>,
        gap: Duration,
        check: impl AsyncFnOnce(&mut TcpStream) + 'static,
    ) {
        glommio::LocalExecutor::default().run(async move {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let addr = listener.local_addr().unwrap();
            let client = std::thread::spawn(move || {
                let mut c = std::net::TcpStream::connect(addr).unwrap();
                for chunk in chunks {
                    let _ = c.write_all(&chunk);
                    std::thread::sleep(gap);
                }
            });
            let mut stream = listener.accept().await.unwrap();
            check(&mut stream).await;
            client.join().unwrap();
        });
    }

    #[test]
    fn a_message_trickled_past_its_deadline_is_broken_off() {
        // Each byte comes well within any per-read timeout, the whole message does not.
        let f = frame(20, 7);
        let chunks = f.chunks(1).map(<[u8]>::to_vec).collect();
        with_client(chunks, Duration::from_millis(40), async |s| {
            let mut r = FrameReader::default();
            let stop = Stop::new();
            let t0 = Instant::now();
            let within = Duration::from_millis(300);
            assert_eq!(
                r.next(s, within, &stop).await.err(),
                Some(NoMessage::Broken)
            );
            let took = t0.elapsed();
            assert!(took < Duration::from_millis(600), "gave up after {took:?}");
        });
    }

    #[test]
    fn pipelined_messages_come_one_by_one_and_a_large_one_grows_the_buffer_only_while_it_is_there()
    {
        let mut all = frame(10, 1);
        all.extend(frame(30_000, 2));
        all.extend(frame(5, 3));
        with_client(vec![all], Duration::ZERO, async |s| {
            let mut r = FrameReader::default();
            let stop = Stop::new();
            let within = Duration::from_secs(5);
            assert_eq!(r.next(s, within, &stop).await.unwrap(), &[1; 10][..]);
            r.consume();
            let m = r.next(s, within, &stop).await.unwrap();
            assert_eq!((m.len(), m[0], m[29_999]), (30_000, 2, 2));
            r.consume();
            assert_eq!(r.next(s, within, &stop).await.unwrap(), &[3; 5][..]);
            r.consume();
            assert_eq!(
                r.capacity(),
                INITIAL,
                "the large message's room was given back"
            );
            assert_eq!(
                r.next(s, within, &stop).await.err(),
                Some(NoMessage::Closed)
            );
        });
    }

    #[test]
    fn messages_of_every_awkward_size_come_whole() {
        // Empty, one byte, sizes that end at or straddle the 2 KiB buffer's end (a length
        // prefix split over it), the largest frame, then a small one.
        let sizes = [0usize, 1, 2044, 2045, 2046, 2047, 65_535, 3, 2046];
        let mut all = Vec::new();
        for (i, n) in sizes.iter().enumerate() {
            all.extend(frame(*n, i as u8 + 1));
        }
        // Sent in pieces of 1000 bytes, so messages and prefixes are cut at many places.
        let chunks = all.chunks(1000).map(<[u8]>::to_vec).collect();
        with_client(chunks, Duration::from_millis(1), async move |s| {
            let mut r = FrameReader::default();
            let stop = Stop::new();
            let within = Duration::from_secs(5);
            for (i, n) in sizes.iter().enumerate() {
                let m = r.next(s, within, &stop).await.unwrap();
                assert_eq!(m.len(), *n, "message {i}");
                assert!(m.iter().all(|b| *b == i as u8 + 1), "message {i}'s bytes");
                r.consume();
            }
            assert_eq!(r.capacity(), INITIAL);
            assert_eq!(
                r.next(s, within, &stop).await.err(),
                Some(NoMessage::Closed)
            );
        });
    }
}
