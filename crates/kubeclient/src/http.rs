//! HTTP/1.1 framing for one GET per connection: the response head (capped at 64 KiB) and
//! the body by Content-Length, chunked (extensions ignored, trailers skipped) or to EOF.
//!
//! The decoder works on bytes already read, kept in its own buffer, so a read timeout or a
//! chunk boundary anywhere (inside a size line, between `\r` and `\n`) never loses state:
//! the caller reads more and decodes again.

use std::io::{self, Read};

/// The response head is refused beyond this size.
const MAX_HEAD: usize = 64 * 1024;
/// A chunk-size or trailer line longer than this is a broken stream.
const MAX_LINE: usize = 4096;

/// A parsed status line and header fields.
#[derive(Debug)]
pub(crate) struct Head {
    /// The status code.
    pub(crate) status: u16,
    /// The header fields in order, names as sent.
    pub(crate) headers: Vec<(String, String)>,
}

impl Head {
    /// The first value of header `name` (case-insensitive).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// How the body is delimited (RFC 9112 §6.3, for responses to GET).
    pub(crate) fn framing(&self) -> Result<Framing, String> {
        if let Some(te) = self.header("transfer-encoding") {
            let last = te.rsplit(',').next().unwrap_or("").trim();
            if last.eq_ignore_ascii_case("chunked") {
                return Ok(Framing::Chunked(Chunk::Size));
            }
            // Any other final coding: the body runs to the end of the connection.
            return Ok(Framing::Eof);
        }
        if let Some(cl) = self.header("content-length") {
            let n: u64 = cl
                .trim()
                .parse()
                .map_err(|_| format!("bad Content-Length {cl:?}"))?;
            return Ok(Framing::Length(n));
        }
        if self.status == 204 || self.status == 304 {
            return Ok(Framing::Length(0));
        }
        Ok(Framing::Eof)
    }
}

/// Finds the end of the head in `buf` and parses it; `Ok(None)` means "read more".
pub(crate) fn parse_head(buf: &[u8]) -> Result<Option<(Head, usize)>, String> {
    let Some(end) = find(buf, b"\r\n\r\n") else {
        if buf.len() > MAX_HEAD {
            return Err(format!("response headers exceed {} KiB", MAX_HEAD / 1024));
        }
        return Ok(None);
    };
    if end + 4 > MAX_HEAD {
        return Err(format!("response headers exceed {} KiB", MAX_HEAD / 1024));
    }
    let text = std::str::from_utf8(&buf[..end]).map_err(|_| "response head is not UTF-8")?;
    let mut lines = text.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or("");
    if !version.starts_with("HTTP/1.") {
        return Err(format!("malformed HTTP status line {status_line:?}"));
    }
    let status: u16 = parts
        .next()
        .and_then(|s| s.parse().ok())
        .filter(|s| (100..1000).contains(s))
        .ok_or_else(|| format!("malformed HTTP status line {status_line:?}"))?;
    let mut headers = Vec::new();
    for line in lines {
        let (n, v) = line
            .split_once(':')
            .ok_or_else(|| format!("malformed HTTP header line {line:?}"))?;
        headers.push((n.trim().to_string(), v.trim().to_string()));
    }
    Ok(Some((Head { status, headers }, end + 4)))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// How a body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// This many bytes remain.
    Length(u64),
    /// Chunked, in this state.
    Chunked(Chunk),
    /// Until the server closes the connection.
    Eof,
}

/// Where a chunked decoder stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Chunk {
    /// Expecting a chunk-size line.
    Size,
    /// Inside chunk data: this many bytes left.
    Data(u64),
    /// Expecting the CRLF after chunk data.
    DataEnd,
    /// After the last chunk: trailer lines until an empty one.
    Trailer,
    /// The body is complete.
    Done,
}

/// Decodes as much of `raw` as it can into `out`, removing what it used from `raw`.
/// Returns whether the body is complete. (`Eof` framing is complete only when the
/// connection ends, which the caller sees.)
pub(crate) fn decode(
    f: &mut Framing,
    raw: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> Result<bool, String> {
    match f {
        Framing::Length(n) => {
            let take = (*n).min(raw.len() as u64) as usize;
            out.extend_from_slice(&raw[..take]);
            raw.drain(..take);
            *n -= take as u64;
            Ok(*n == 0)
        }
        Framing::Eof => {
            out.append(raw);
            Ok(false)
        }
        Framing::Chunked(c) => decode_chunked(c, raw, out),
    }
}

fn decode_chunked(c: &mut Chunk, raw: &mut Vec<u8>, out: &mut Vec<u8>) -> Result<bool, String> {
    let mut used = 0;
    let res = loop {
        let rest = &raw[used..];
        match *c {
            Chunk::Size => {
                let Some(pos) = find(rest, b"\r\n") else {
                    if rest.len() > MAX_LINE {
                        break Err("chunk-size line too long".into());
                    }
                    break Ok(false);
                };
                let line = std::str::from_utf8(&rest[..pos]).map_err(|_| "bad chunk-size line")?;
                // Extensions (`;name=value`) are ignored, as RFC 9112 §7.1.1 allows.
                let hex = line
                    .split(';')
                    .next()
                    .unwrap_or("")
                    .trim_matches([' ', '\t']);
                let size = u64::from_str_radix(hex, 16)
                    .ok()
                    .filter(|_| !hex.is_empty() && hex.len() <= 15)
                    .ok_or_else(|| format!("bad chunk size {line:?}"))?;
                used += pos + 2;
                *c = if size == 0 {
                    Chunk::Trailer
                } else {
                    Chunk::Data(size)
                };
            }
            Chunk::Data(n) => {
                if rest.is_empty() {
                    break Ok(false);
                }
                let take = n.min(rest.len() as u64) as usize;
                out.extend_from_slice(&rest[..take]);
                used += take;
                *c = if n == take as u64 {
                    Chunk::DataEnd
                } else {
                    Chunk::Data(n - take as u64)
                };
            }
            Chunk::DataEnd => {
                if rest.len() < 2 {
                    break Ok(false);
                }
                if &rest[..2] != b"\r\n" {
                    break Err("missing CRLF after chunk data".into());
                }
                used += 2;
                *c = Chunk::Size;
            }
            Chunk::Trailer => {
                let Some(pos) = find(rest, b"\r\n") else {
                    if rest.len() > MAX_LINE {
                        break Err("trailer line too long".into());
                    }
                    break Ok(false);
                };
                used += pos + 2;
                if pos == 0 {
                    *c = Chunk::Done;
                }
            }
            Chunk::Done => break Ok(true),
        }
    };
    raw.drain(..used);
    res
}

/// What one step of reading a body gave.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Some bytes were appended to the output.
    Data,
    /// The socket's read timeout passed with nothing new: check stop and the watchdog.
    Timeout,
    /// The body is complete.
    End,
}

/// A response body being read from its connection.
pub(crate) struct Body<R> {
    conn: R,
    raw: Vec<u8>,
    framing: Framing,
    done: bool,
}

impl<R: Read> Body<R> {
    /// A body whose first bytes (read with the head) are `raw`.
    pub(crate) fn new(conn: R, raw: Vec<u8>, framing: Framing) -> Self {
        let done = framing == Framing::Length(0);
        Body {
            conn,
            raw,
            framing,
            done,
        }
    }

    /// Decodes what is buffered into `out`; if that gives nothing, reads once.
    pub(crate) fn step(&mut self, out: &mut Vec<u8>) -> io::Result<Step> {
        loop {
            if self.done {
                return Ok(Step::End);
            }
            let before = out.len();
            let complete =
                decode(&mut self.framing, &mut self.raw, out).map_err(io::Error::other)?;
            if complete {
                self.done = true;
            }
            if out.len() > before {
                return Ok(Step::Data);
            }
            if complete {
                return Ok(Step::End);
            }
            let mut buf = [0u8; 16 * 1024];
            match self.conn.read(&mut buf) {
                Ok(0) => {
                    if self.framing == Framing::Eof {
                        self.done = true;
                        return Ok(Step::End);
                    }
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "connection closed inside the response body",
                    ));
                }
                Ok(n) => self.raw.extend_from_slice(&buf[..n]),
                Err(e) if is_timeout(&e) => return Ok(Step::Timeout),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// Whether a read error is the socket's read timeout passing.
pub(crate) fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `wire` to a chunked decoder in pieces of `step` bytes.
    fn chunked_in_pieces(wire: &[u8], step: usize) -> (Vec<u8>, bool) {
        let mut f = Framing::Chunked(Chunk::Size);
        let mut raw = Vec::new();
        let mut out = Vec::new();
        let mut done = false;
        for piece in wire.chunks(step) {
            raw.extend_from_slice(piece);
            done = decode(&mut f, &mut raw, &mut out).unwrap();
        }
        (out, done)
    }

    #[test]
    fn chunked_sizes_extensions_and_trailers_in_every_split() {
        let wire = b"4;name=value\r\nWiki\r\nA \r\n0123456789\r\n1a\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-Trailer: 1\r\nOther: 2\r\n\r\n";
        for step in 1..wire.len() {
            let (out, done) = chunked_in_pieces(wire, step);
            assert_eq!(
                out, b"Wiki0123456789abcdefghijklmnopqrstuvwxyz",
                "step {step}"
            );
            assert!(done, "step {step}");
        }
    }

    #[test]
    fn chunked_incomplete_is_not_done_and_bad_sizes_fail() {
        let (out, done) = chunked_in_pieces(b"3\r\nabc\r\n0\r\n", 2);
        assert_eq!(out, b"abc");
        assert!(!done, "no empty line after the last chunk yet");
        for bad in [&b"zz\r\n"[..], b"\r\n", b"3\r\nabcXY", b"-1\r\n"] {
            let mut f = Framing::Chunked(Chunk::Size);
            let mut raw = bad.to_vec();
            assert!(
                decode(&mut f, &mut raw, &mut Vec::new()).is_err(),
                "{bad:?}"
            );
        }
        let mut f = Framing::Chunked(Chunk::Size);
        let mut raw = vec![b'1'; MAX_LINE + 1];
        assert!(decode(&mut f, &mut raw, &mut Vec::new()).is_err());
    }

    #[test]
    fn length_stops_at_its_count() {
        let mut f = Framing::Length(5);
        let mut raw = b"hel".to_vec();
        let mut out = Vec::new();
        assert!(!decode(&mut f, &mut raw, &mut out).unwrap());
        raw.extend_from_slice(b"lo and more");
        assert!(decode(&mut f, &mut raw, &mut out).unwrap());
        assert_eq!(out, b"hello");
        assert_eq!(raw, b" and more");
    }

    #[test]
    fn head_parsing() {
        let buf = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ntransfer-encoding:  chunked \r\n\r\n5\r\n";
        let (h, n) = parse_head(buf).unwrap().unwrap();
        assert_eq!(h.status, 200);
        assert_eq!(h.header("Transfer-Encoding"), Some("chunked"));
        assert_eq!(h.framing().unwrap(), Framing::Chunked(Chunk::Size));
        assert_eq!(&buf[n..], b"5\r\n");
        assert!(
            parse_head(b"HTTP/1.1 200 OK\r\nA: b\r\n")
                .unwrap()
                .is_none()
        );
        assert!(parse_head(b"SSH-2.0 hi\r\n\r\n").is_err());
        assert!(parse_head(b"HTTP/1.1 abc\r\n\r\n").is_err());
        let (h, _) = parse_head(b"HTTP/1.1 410 Gone\r\nContent-Length: 12\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!(h.framing().unwrap(), Framing::Length(12));
        let (h, _) = parse_head(b"HTTP/1.0 200 OK\r\n\r\n").unwrap().unwrap();
        assert_eq!(h.framing().unwrap(), Framing::Eof);
        let mut big = b"HTTP/1.1 200 OK\r\n".to_vec();
        while big.len() <= MAX_HEAD {
            big.extend_from_slice(b"X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n");
        }
        assert!(parse_head(&big).is_err(), "no end yet, already too big");
        big.extend_from_slice(b"\r\n");
        assert!(parse_head(&big).is_err());
    }

    /// A reader that returns its pieces one per read, with a timeout between each.
    struct Trickle(Vec<Vec<u8>>, bool);
    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.1 = !self.1;
            if self.1 {
                return Err(io::Error::new(io::ErrorKind::WouldBlock, "tick"));
            }
            if self.0.is_empty() {
                return Ok(0);
            }
            let p = self.0.remove(0);
            buf[..p.len()].copy_from_slice(&p);
            Ok(p.len())
        }
    }

    #[test]
    fn body_survives_timeouts_between_split_reads() {
        let pieces = vec![
            b"1".to_vec(),
            b"0\r\n0123".to_vec(),
            b"456789ABCDEF\r".to_vec(),
            b"\n0\r\n\r\n".to_vec(),
        ];
        let mut body = Body::new(
            Trickle(pieces, false),
            b"".to_vec(),
            Framing::Chunked(Chunk::Size),
        );
        let mut out = Vec::new();
        let mut timeouts = 0;
        for _ in 0..100 {
            match body.step(&mut out).unwrap() {
                Step::Timeout => timeouts += 1,
                Step::Data => {}
                Step::End => break,
            }
        }
        assert_eq!(out, b"0123456789ABCDEF");
        assert!(timeouts >= 3);
        // EOF inside a length body is an error; EOF framing ends there.
        let mut body = Body::new(
            Trickle(vec![b"abc".to_vec()], true),
            Vec::new(),
            Framing::Length(10),
        );
        let mut out = Vec::new();
        let mut r = Ok(Step::Data);
        for _ in 0..10 {
            r = body.step(&mut out);
            if r.is_err() {
                break;
            }
        }
        assert_eq!(r.unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
        let mut body = Body::new(
            Trickle(vec![b"abc".to_vec()], true),
            b"x".to_vec(),
            Framing::Eof,
        );
        let mut out = Vec::new();
        for _ in 0..10 {
            if body.step(&mut out).unwrap() == Step::End {
                break;
            }
        }
        assert_eq!(out, b"xabc");
    }
}
