//! Domain names: a borrowed, validated, uncompressed wire name ([`Name`]),
//! the walkers the parsers use on names inside messages (with or without
//! compression), presentation-format printing as miekg does it, and
//! [`name_to_wire`] for configuration.

use std::fmt;

use super::consts::{HEADER_LEN, MAX_LABEL_LEN, MAX_NAME_LEN};

/// Why a name was rejected. Used both for wire names (parsing) and for
/// presentation names (configuration).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameError {
    /// An empty presentation string (use `.` for the root).
    Empty,
    /// Two dots in a row, or a leading dot, in a presentation name.
    EmptyLabel,
    /// A label longer than 63 bytes.
    LabelTooLong,
    /// A name longer than 255 bytes in wire form.
    NameTooLong,
    /// A bad `\` escape in a presentation name.
    BadEscape,
    /// The name runs past the end of the buffer.
    Truncated,
    /// A label type other than 00 (length) or 11 (pointer).
    BadLabelType,
    /// A compression pointer that points forward, to itself, into the
    /// header, or too many pointers in a row.
    BadPointer,
    /// A compression pointer where none is allowed (question name,
    /// uncompressed names).
    Compressed,
    /// Bytes left over after the root label.
    TrailingBytes,
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            NameError::Empty => "empty name",
            NameError::EmptyLabel => "empty label",
            NameError::LabelTooLong => "label longer than 63 bytes",
            NameError::NameTooLong => "name longer than 255 bytes",
            NameError::BadEscape => "bad escape sequence",
            NameError::Truncated => "name runs past the end of the message",
            NameError::BadLabelType => "reserved label type",
            NameError::BadPointer => "bad compression pointer",
            NameError::Compressed => "compression pointer not allowed here",
            NameError::TrailingBytes => "bytes after the root label",
        };
        f.write_str(s)
    }
}

impl std::error::Error for NameError {}

/// miekg follows at most this many compression pointers in one name.
const MAX_POINTERS: usize = 126;

/// Where a walked name ends and how long it is once decompressed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Walked {
    /// Offset just past the name's bytes at its own position (after the
    /// first pointer when compressed).
    pub end: usize,
    /// Length of the decompressed wire name, root byte included (1 = root).
    pub wire_len: usize,
}

/// Walks an uncompressed name starting at `start`; bytes at or past `limit`
/// are out of bounds. A pointer is an error ([`NameError::Compressed`]).
#[inline]
pub(crate) fn walk_uncompressed(
    buf: &[u8],
    start: usize,
    limit: usize,
) -> Result<Walked, NameError> {
    let mut pos = start;
    loop {
        if pos >= limit {
            return Err(NameError::Truncated);
        }
        let c = buf[pos];
        match c & 0xC0 {
            0x00 => {
                if c == 0 {
                    return Ok(Walked {
                        end: pos + 1,
                        wire_len: pos + 1 - start,
                    });
                }
                let next = pos + 1 + c as usize;
                if next > limit {
                    return Err(NameError::Truncated);
                }
                // Room must remain for the root byte (255 in total).
                if next - start > MAX_NAME_LEN - 1 {
                    return Err(NameError::NameTooLong);
                }
                pos = next;
            }
            0xC0 => return Err(NameError::Compressed),
            _ => return Err(NameError::BadLabelType),
        }
    }
}

/// Calls `span` with each run of bytes the (possibly compressed) name at `start` of `msg` is
/// read from, in reading order: each label with its length byte, each pointer, the root
/// byte. A name is the bytes it is read from wherever its pointers lead, so a writer that
/// changes bytes of a message in place (cache's TTLs) must not change any of these. Returns
/// the offset just past the name's bytes at `start`; bytes at or past `limit` are out of
/// bounds, as for every name of a message.
pub fn name_spans(
    msg: &[u8],
    start: usize,
    limit: usize,
    mut span: impl FnMut(std::ops::Range<usize>),
) -> Result<usize, NameError> {
    let walked = walk_compressed(msg, start, limit)?;
    let mut pos = start;
    loop {
        let c = msg[pos];
        if c & 0xC0 == 0xC0 {
            span(pos..pos + 2);
            pos = (((c & 0x3F) as usize) << 8) | msg[pos + 1] as usize;
            continue;
        }
        span(pos..pos + 1 + c as usize);
        if c == 0 {
            return Ok(walked.end);
        }
        pos += 1 + c as usize;
    }
}

/// Walks a possibly compressed name starting at `start` inside a message;
/// bytes at or past `limit` are out of bounds. Pointers must point strictly
/// backwards (which also rules out loops) and not into the header.
#[inline]
pub(crate) fn walk_compressed(msg: &[u8], start: usize, limit: usize) -> Result<Walked, NameError> {
    let mut pos = start;
    let mut end = 0usize;
    let mut wire_len = 0usize;
    let mut hops = 0usize;
    loop {
        if pos >= limit {
            return Err(NameError::Truncated);
        }
        let c = msg[pos];
        match c & 0xC0 {
            0x00 => {
                if c == 0 {
                    if hops == 0 {
                        end = pos + 1;
                    }
                    return Ok(Walked {
                        end,
                        wire_len: wire_len + 1,
                    });
                }
                let l = c as usize;
                if pos + 1 + l > limit {
                    return Err(NameError::Truncated);
                }
                wire_len += l + 1;
                if wire_len > MAX_NAME_LEN - 1 {
                    return Err(NameError::NameTooLong);
                }
                pos += 1 + l;
            }
            0xC0 => {
                if pos + 1 >= limit {
                    return Err(NameError::Truncated);
                }
                let target = (((c & 0x3F) as usize) << 8) | msg[pos + 1] as usize;
                if hops == 0 {
                    end = pos + 2;
                }
                hops += 1;
                if target >= pos || target < HEADER_LEN || hops > MAX_POINTERS {
                    return Err(NameError::BadPointer);
                }
                pos = target;
            }
            _ => return Err(NameError::BadLabelType),
        }
    }
}

/// A validated, uncompressed domain name in wire form, borrowed from a
/// packet or from configuration. Keeps the original case; every comparison
/// it offers is ASCII case-insensitive.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Name<'a> {
    wire: &'a [u8],
}

impl<'a> Name<'a> {
    /// The root name `.`.
    pub const ROOT: Name<'static> = Name { wire: &[0] };

    /// Validates `wire` as exactly one uncompressed name (labels ≤ 63,
    /// total ≤ 255, ends with the root label and nothing after it).
    pub fn from_wire(wire: &'a [u8]) -> Result<Name<'a>, NameError> {
        let w = walk_uncompressed(wire, 0, wire.len())?;
        if w.end != wire.len() {
            return Err(NameError::TrailingBytes);
        }
        Ok(Name { wire })
    }

    /// Wraps bytes already validated by this module (the question name).
    #[inline]
    pub(crate) fn from_wire_unchecked(wire: &'a [u8]) -> Name<'a> {
        debug_assert!(Name::from_wire(wire).is_ok());
        Name { wire }
    }

    /// The wire bytes, original case.
    #[inline]
    pub fn as_wire(&self) -> &'a [u8] {
        self.wire
    }

    /// Length in wire form (1 for the root).
    #[inline]
    pub fn wire_len(&self) -> usize {
        self.wire.len()
    }

    /// True for the root name `.`.
    #[inline]
    pub fn is_root(&self) -> bool {
        self.wire.len() == 1
    }

    /// Number of labels, the root not counted (`example.org.` has 2).
    pub fn label_count(&self) -> usize {
        self.labels().count()
    }

    /// The labels from left to right, without length bytes; the root label
    /// is not yielded.
    #[inline]
    pub fn labels(&self) -> Labels<'a> {
        Labels {
            wire: self.wire,
            pos: 0,
        }
    }

    /// The wire suffixes at label boundaries, from the full name down to the
    /// root (`a.b.` yields `a.b.`, `b.`, `.`): what zone lookup walks.
    #[inline]
    pub fn suffixes(&self) -> Suffixes<'a> {
        Suffixes {
            wire: self.wire,
            pos: 0,
        }
    }

    /// ASCII case-insensitive equality with another wire name. Length bytes
    /// (≤ 63) are never changed by ASCII case folding, so a plain
    /// byte-wise comparison also aligns the labels.
    #[inline]
    pub fn eq_ignore_ascii_case(&self, other_wire: &[u8]) -> bool {
        self.wire.eq_ignore_ascii_case(other_wire)
    }

    /// True when this name equals `zone_wire` or lies below it (ASCII
    /// case-insensitive, on label boundaries). `zone_wire` must be a valid
    /// wire name; an empty slice is never a zone.
    pub fn is_subdomain_of(&self, zone_wire: &[u8]) -> bool {
        // Every name is under the root: no label walk for the commonest zone.
        if zone_wire == [0] {
            return true;
        }
        if zone_wire.is_empty() || zone_wire.len() > self.wire.len() {
            return false;
        }
        let off = self.wire.len() - zone_wire.len();
        let mut pos = 0;
        while pos < off {
            pos += self.wire[pos] as usize + 1;
        }
        pos == off && self.wire[off..].eq_ignore_ascii_case(zone_wire)
    }

    /// Writes the lower-cased wire form into `buf` and returns it: a
    /// stack-friendly key for zone and cache lookups.
    pub fn lowercase_wire<'b>(&self, buf: &'b mut [u8; MAX_NAME_LEN]) -> &'b [u8] {
        let n = self.wire.len();
        for (d, s) in buf[..n].iter_mut().zip(self.wire) {
            *d = s.to_ascii_lowercase();
        }
        &buf[..n]
    }

    /// Feeds the lower-cased wire form to `f` eight bytes at a time, read straight from the
    /// packet: for hashing a name without first copying it lower-cased into a buffer (a
    /// word load right after byte stores to the same place stalls). Words are whole
    /// chunks from the start, then the last eight bytes (overlapping the previous chunk)
    /// or, for names under eight bytes, all of them; the same name always gives the same
    /// words, and different lengths are for the caller to tell apart.
    #[inline]
    pub fn for_each_lowercase_word(&self, mut f: impl FnMut(u64)) {
        let w = self.wire;
        let mut chunks = w.chunks_exact(8);
        for c in &mut chunks {
            f(lowercase_word(word(c)));
        }
        let rest = chunks.remainder().len();
        if rest == 0 {
            return;
        }
        if w.len() >= 8 {
            f(lowercase_word(word(&w[w.len() - 8..])));
        } else {
            f(lowercase_word(
                w.iter().fold(0u64, |v, &b| (v << 8) | u64::from(b)),
            ));
        }
    }

    /// Whether `lower` (a lower-case wire name) is this name, ignoring ASCII case.
    #[inline]
    pub fn eq_lowercase(&self, lower: &[u8]) -> bool {
        let w = self.wire;
        if w.len() != lower.len() {
            return false;
        }
        let (mut a, mut b) = (w.chunks_exact(8), lower.chunks_exact(8));
        for (x, y) in (&mut a).zip(&mut b) {
            if lowercase_word(word(x)) != word(y) {
                return false;
            }
        }
        a.remainder()
            .iter()
            .zip(b.remainder())
            .all(|(x, y)| x.to_ascii_lowercase() == *y)
    }

    /// Writes the lower-cased presentation form (what CoreDNS calls
    /// `state.Name()`), without allocating.
    pub fn write_lowercase<W: fmt::Write + ?Sized>(&self, w: &mut W) -> fmt::Result {
        write_presentation(self.wire, w, true)
    }

    /// A `Display` adapter printing the lower-cased presentation form.
    #[inline]
    pub fn lowercase(&self) -> Lowercase<'a> {
        Lowercase(*self)
    }
}

impl fmt::Display for Name<'_> {
    /// Presentation format in the original case, escaped like miekg.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_presentation(self.wire, f, false)
    }
}

impl fmt::Debug for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Name({self})")
    }
}

/// `Display` adapter for the lower-cased presentation form of a [`Name`].
#[derive(Clone, Copy, Debug)]
pub struct Lowercase<'a>(Name<'a>);

impl fmt::Display for Lowercase<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_presentation(self.0.wire, f, true)
    }
}

/// Bytes miekg escapes with a backslash (`isDomainNameLabelSpecial`).
#[inline]
const fn is_special(b: u8) -> bool {
    matches!(
        b,
        b'.' | b' ' | b'\'' | b'@' | b';' | b'(' | b')' | b'"' | b'\\'
    )
}

/// Where [`write_presentation`] puts its ASCII bytes: a `fmt::Write`, or a byte slice
/// (plugins that match names as text fill a stack buffer without `fmt`'s dispatch).
trait Out {
    /// Appends `b` (ASCII only); `Err` when there is no room.
    fn put(&mut self, b: &[u8]) -> fmt::Result;
}

/// A `fmt::Write` as an [`Out`].
struct FmtOut<'w, W: fmt::Write + ?Sized>(&'w mut W);

impl<W: fmt::Write + ?Sized> Out for FmtOut<'_, W> {
    fn put(&mut self, b: &[u8]) -> fmt::Result {
        self.0.write_str(ascii(b))
    }
}

/// A byte slice being filled, as an [`Out`].
struct SliceOut<'b> {
    buf: &'b mut [u8],
    len: usize,
}

impl Out for SliceOut<'_> {
    #[inline]
    fn put(&mut self, b: &[u8]) -> fmt::Result {
        let end = self.len + b.len();
        self.buf
            .get_mut(self.len..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(b);
        self.len = end;
        Ok(())
    }
}

impl Name<'_> {
    /// Writes the lower-cased presentation form into `buf` and gives its length, `None`
    /// when it does not fit: [`Name::write_lowercase`] without `fmt`, for the plugins that
    /// match every query's name as text. Only ASCII is written.
    pub fn lowercase_into(&self, buf: &mut [u8]) -> Option<usize> {
        let mut out = SliceOut { buf, len: 0 };
        presentation(self.wire, &mut out, true).ok()?;
        Some(out.len)
    }
}

/// Prints an uncompressed wire name the way miekg's `UnpackDomainName`
/// does: `\X` for special bytes, `\DDD` for bytes outside `' '..='~'`, a dot
/// after every label, `.` for the root.
fn write_presentation<W: fmt::Write + ?Sized>(wire: &[u8], w: &mut W, lower: bool) -> fmt::Result {
    presentation(wire, &mut FmtOut(w), lower)
}

/// [`write_presentation`] into any [`Out`].
#[inline]
fn presentation<O: Out>(wire: &[u8], w: &mut O, lower: bool) -> fmt::Result {
    if wire.len() <= 1 {
        return w.put(b".");
    }
    let mut pos = 0;
    while pos < wire.len() {
        let l = wire[pos] as usize;
        if l == 0 || pos + 1 + l > wire.len() {
            break;
        }
        label_into(&wire[pos + 1..pos + 1 + l], w, lower)?;
        w.put(b".")?;
        pos += 1 + l;
    }
    Ok(())
}

/// Bytes printed as they are: in `' '..='~'` and not special.
const PLAIN: [bool; 256] = plain_bytes(false);
/// [`PLAIN`] without the upper-case letters, for the lower-cased form.
const PLAIN_LOWER: [bool; 256] = plain_bytes(true);

const fn plain_bytes(lower: bool) -> [bool; 256] {
    let mut t = [false; 256];
    let mut b = b' ';
    while b <= b'~' {
        t[b as usize] = !(is_special(b) || lower && b.is_ascii_uppercase());
        b += 1;
    }
    t
}

/// Prints one label (its bytes, without the length) escaped as [`write_presentation`] does.
#[inline]
fn label_into<O: Out>(label: &[u8], w: &mut O, lower: bool) -> fmt::Result {
    // Runs of plain bytes go out in one put.
    let mut run = 0;
    // Bytes that go out as they are: one table lookup per byte.
    let plain = if lower { &PLAIN_LOWER } else { &PLAIN };
    for (i, &b) in label.iter().enumerate() {
        if plain[b as usize] {
            continue;
        }
        if run < i {
            w.put(&label[run..i])?;
        }
        run = i + 1;
        if is_special(b) {
            w.put(&[b'\\', b])?;
        } else if !(b' '..=b'~').contains(&b) {
            w.put(&[b'\\', b'0' + b / 100, b'0' + (b / 10) % 10, b'0' + b % 10])?;
        } else {
            w.put(&[b.to_ascii_lowercase()])?;
        }
    }
    if run < label.len() {
        w.put(&label[run..])?;
    }
    Ok(())
}

/// `Display` adapter printing one label (as [`Name::labels`] yields it) lower-cased and
/// escaped like miekg, without a dot: a label of CoreDNS's `dns.SplitDomainName(state.Name())`,
/// for plugins that publish parts of a query name as text (kubernetes's metadata).
#[derive(Clone, Copy, Debug)]
pub struct LabelLowercase<'a>(pub &'a [u8]);

impl fmt::Display for LabelLowercase<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        label_into(self.0, &mut FmtOut(f), true)
    }
}

/// Views printable ASCII bytes as `&str`.
#[inline]
fn ascii(b: &[u8]) -> &str {
    // Only called on bytes in ' '..='~' (checked by the caller), which are
    // valid UTF-8; the fallback never triggers.
    std::str::from_utf8(b).unwrap_or("?")
}

/// Iterator over the labels of a [`Name`] (see [`Name::labels`]).
#[derive(Clone, Debug)]
pub struct Labels<'a> {
    wire: &'a [u8],
    pos: usize,
}

impl<'a> Iterator for Labels<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let l = *self.wire.get(self.pos)? as usize;
        if l == 0 {
            return None;
        }
        let label = self.wire.get(self.pos + 1..self.pos + 1 + l)?;
        self.pos += 1 + l;
        Some(label)
    }
}

/// Iterator over the label-boundary suffixes of a [`Name`] (see
/// [`Name::suffixes`]).
#[derive(Clone, Debug)]
pub struct Suffixes<'a> {
    wire: &'a [u8],
    pos: usize,
}

impl<'a> Iterator for Suffixes<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let rest = self.wire.get(self.pos..)?;
        let l = *rest.first()? as usize;
        self.pos = if l == 0 {
            self.wire.len()
        } else {
            self.pos + 1 + l
        };
        Some(rest)
    }
}

/// Converts a presentation name (`Example.ORG`, `example.org.`, `.`, with
/// `\.`, `\\` and `\DDD` escapes) into lower-cased wire form. Off the hot
/// path: used for zone names from the configuration.
pub fn name_to_wire(presentation: &str) -> Result<Vec<u8>, NameError> {
    let s = presentation.as_bytes();
    if s.is_empty() {
        return Err(NameError::Empty);
    }
    if s == b"." {
        return Ok(vec![0]);
    }
    let mut out = Vec::with_capacity(s.len() + 2);
    let mut len_at = 0;
    out.push(0);
    let mut label_len = 0usize;
    let mut i = 0;
    while i < s.len() {
        let b = match s[i] {
            b'.' => {
                if label_len == 0 {
                    return Err(NameError::EmptyLabel);
                }
                out[len_at] = label_len as u8;
                len_at = out.len();
                out.push(0);
                label_len = 0;
                i += 1;
                continue;
            }
            b'\\' => {
                let next = *s.get(i + 1).ok_or(NameError::BadEscape)?;
                if next.is_ascii_digit() {
                    let d = s.get(i + 1..i + 4).ok_or(NameError::BadEscape)?;
                    if !d.iter().all(u8::is_ascii_digit) {
                        return Err(NameError::BadEscape);
                    }
                    let v = d.iter().fold(0u32, |acc, c| acc * 10 + u32::from(c - b'0'));
                    i += 4;
                    u8::try_from(v).map_err(|_| NameError::BadEscape)?
                } else {
                    i += 2;
                    next
                }
            }
            other => {
                i += 1;
                other
            }
        };
        label_len += 1;
        if label_len > MAX_LABEL_LEN {
            return Err(NameError::LabelTooLong);
        }
        out.push(b.to_ascii_lowercase());
    }
    if label_len > 0 {
        out[len_at] = label_len as u8;
        out.push(0);
    }
    if out.len() > MAX_NAME_LEN {
        return Err(NameError::NameTooLong);
    }
    Ok(out)
}

/// Eight bytes as one word (native order: only compared and hashed, never shown).
#[inline]
fn word(b: &[u8]) -> u64 {
    u64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
}

/// ASCII lower case of the eight bytes of `x` at once: each byte in `A..=Z` gains 0x20,
/// every other byte (label lengths, digits, bytes ≥ 0x80) stays.
#[inline]
const fn lowercase_word(x: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let low = x & LOW7;
    // Per byte (no carries: each sum stays under 0x100): bit 7 set iff the low seven bits
    // are ≥ b'A', and iff they are > b'Z'.
    let from_a = low + 0x3f3f_3f3f_3f3f_3f3f;
    let past_z = low + 0x2525_2525_2525_2525;
    let upper = from_a & !past_z & !x & HIGH;
    x | (upper >> 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<u8> {
        name_to_wire(s).unwrap()
    }

    #[test]
    fn lowercase_into_matches_write_lowercase_and_refuses_a_short_buffer() {
        let wire = b"\x04A.\"z\x03\x00\xffB\x00";
        let name = Name::from_wire(wire).unwrap();
        let mut text = String::new();
        name.write_lowercase(&mut text).unwrap();
        assert_eq!(text, "a\\.\\\"z.\\000\\255b.");
        let mut buf = [0u8; 64];
        let n = name.lowercase_into(&mut buf).unwrap();
        assert_eq!(&buf[..n], text.as_bytes());
        assert_eq!(name.lowercase_into(&mut buf[..text.len() - 1]), None);
        let root = Name::from_wire(b"\x00").unwrap();
        assert_eq!(root.lowercase_into(&mut buf), Some(1));
        assert_eq!(buf[0], b'.');
    }

    #[test]
    fn to_wire_basic_and_root() {
        assert_eq!(w("."), vec![0]);
        assert_eq!(w("Example.ORG"), b"\x07example\x03org\x00".to_vec());
        assert_eq!(w("example.org."), b"\x07example\x03org\x00".to_vec());
        assert_eq!(w("a"), b"\x01a\x00".to_vec());
    }

    #[test]
    fn to_wire_escapes() {
        assert_eq!(w("a\\.b.c"), b"\x03a.b\x01c\x00".to_vec());
        assert_eq!(w("a\\\\b."), b"\x03a\\b\x00".to_vec());
        assert_eq!(w("\\065\\000x."), b"\x03a\x00x\x00".to_vec());
        assert_eq!(w("a\\ b"), b"\x03a b\x00".to_vec());
        assert_eq!(name_to_wire("a\\"), Err(NameError::BadEscape));
        assert_eq!(name_to_wire("a\\25"), Err(NameError::BadEscape));
        assert_eq!(name_to_wire("a\\256"), Err(NameError::BadEscape));
        assert_eq!(name_to_wire("a\\2x5"), Err(NameError::BadEscape));
    }

    #[test]
    fn to_wire_errors() {
        assert_eq!(name_to_wire(""), Err(NameError::Empty));
        assert_eq!(name_to_wire("a..b"), Err(NameError::EmptyLabel));
        assert_eq!(name_to_wire(".a"), Err(NameError::EmptyLabel));
        assert_eq!(name_to_wire("a.."), Err(NameError::EmptyLabel));
        let l63 = "x".repeat(63);
        assert!(name_to_wire(&l63).is_ok());
        assert_eq!(name_to_wire(&"x".repeat(64)), Err(NameError::LabelTooLong));
        // 4 labels of 63 = 4*64 + 1 = 257 > 255
        let long = [l63.as_str(); 4].join(".");
        assert_eq!(name_to_wire(&long), Err(NameError::NameTooLong));
        // 3*64 + 62 + 1 = 255 exactly fits
        let ok = format!("{}.{}", [l63.as_str(); 3].join("."), "y".repeat(61));
        assert_eq!(name_to_wire(&ok).unwrap().len(), 255);
    }

    #[test]
    fn from_wire_validation() {
        assert!(Name::from_wire(&[0]).is_ok());
        assert_eq!(Name::from_wire(&[]), Err(NameError::Truncated));
        assert_eq!(Name::from_wire(b"\x01a"), Err(NameError::Truncated));
        assert_eq!(
            Name::from_wire(b"\x01a\x00\x00"),
            Err(NameError::TrailingBytes)
        );
        assert_eq!(Name::from_wire(b"\xC0\x0C"), Err(NameError::Compressed));
        assert_eq!(Name::from_wire(b"\x41a\x00"), Err(NameError::BadLabelType));
        assert_eq!(Name::from_wire(b"\x81a\x00"), Err(NameError::BadLabelType));
        let mut big = Vec::new();
        for _ in 0..4 {
            big.push(63);
            big.extend_from_slice(&[b'a'; 63]);
        }
        big.push(0);
        assert_eq!(Name::from_wire(&big), Err(NameError::NameTooLong));
    }

    #[test]
    fn display_escapes_like_miekg() {
        let n = b"\x07ExAmPle\x03org\x00";
        assert_eq!(Name::from_wire(n).unwrap().to_string(), "ExAmPle.org.");
        assert_eq!(
            Name::from_wire(n).unwrap().lowercase().to_string(),
            "example.org."
        );
        assert_eq!(Name::ROOT.to_string(), ".");
        let odd = b"\x0aa.b\\c d\x00\xffZ\x00";
        let name = Name::from_wire(odd).unwrap();
        assert_eq!(name.to_string(), "a\\.b\\\\c\\ d\\000\\255Z.");
        let mut s = String::new();
        name.write_lowercase(&mut s).unwrap();
        assert_eq!(s, "a\\.b\\\\c\\ d\\000\\255z.");
        let specials = b"\x07'@;()\"\x01\x00";
        assert_eq!(
            Name::from_wire(specials).unwrap().to_string(),
            "\\'\\@\\;\\(\\)\\\"\\001."
        );
    }

    #[test]
    fn a_label_alone_prints_as_in_the_name_without_its_dot() {
        let odd = b"\x0aa.B\\c d\x00\xffZ\x03Svc\x00";
        let labels: Vec<String> = Name::from_wire(odd)
            .unwrap()
            .labels()
            .map(|l| LabelLowercase(l).to_string())
            .collect();
        assert_eq!(labels, ["a\\.b\\\\c\\ d\\000\\255z", "svc"]);
        assert_eq!(LabelLowercase(b"").to_string(), "");
    }

    #[test]
    fn display_round_trips_through_name_to_wire() {
        let odd = b"\x09A.b\\c d\x00\xff\x03Org\x00";
        let name = Name::from_wire(odd).unwrap();
        let back = name_to_wire(&name.to_string()).unwrap();
        assert_eq!(back, odd.to_ascii_lowercase());
    }

    #[test]
    fn case_insensitive_compare() {
        let a = Name::from_wire(b"\x03WwW\x07Example\x03ORG\x00").unwrap();
        assert!(a.eq_ignore_ascii_case(&w("www.example.org")));
        assert!(!a.eq_ignore_ascii_case(&w("www.example.com")));
        assert!(!a.eq_ignore_ascii_case(&w("example.org")));
        // Non-ASCII bytes compare exactly.
        let b = Name::from_wire(b"\x01\xc4\x00").unwrap();
        assert!(!b.eq_ignore_ascii_case(b"\x01\xe4\x00"));
    }

    #[test]
    fn labels_and_suffixes() {
        let n = Name::from_wire(b"\x03www\x07Example\x03org\x00").unwrap();
        let labels: Vec<&[u8]> = n.labels().collect();
        assert_eq!(labels, vec![&b"www"[..], b"Example", b"org"]);
        assert_eq!(n.label_count(), 3);
        let sfx: Vec<&[u8]> = n.suffixes().collect();
        assert_eq!(
            sfx,
            vec![
                &b"\x03www\x07Example\x03org\x00"[..],
                b"\x07Example\x03org\x00",
                b"\x03org\x00",
                b"\x00"
            ]
        );
        assert_eq!(
            Name::ROOT.suffixes().collect::<Vec<_>>(),
            vec![&b"\x00"[..]]
        );
        assert_eq!(Name::ROOT.labels().count(), 0);
        assert!(Name::ROOT.is_root());
    }

    #[test]
    fn subdomain_checks() {
        let n = Name::from_wire(b"\x03www\x07Example\x03org\x00").unwrap();
        assert!(n.is_subdomain_of(&w("example.org")));
        assert!(n.is_subdomain_of(&w("EXAMPLE.org.")));
        assert!(n.is_subdomain_of(&w("www.example.org")));
        assert!(n.is_subdomain_of(&[0]));
        assert!(!n.is_subdomain_of(&w("ample.org")));
        assert!(!n.is_subdomain_of(&w("org.example")));
        assert!(!n.is_subdomain_of(&w("a.www.example.org")));
        assert!(!n.is_subdomain_of(&[]));
        // A label that contains the zone's bytes but not on a boundary.
        let tricky = Name::from_wire(b"\x05a\x03org\x03org\x00").unwrap();
        assert!(tricky.is_subdomain_of(&w("org")));
        assert!(!tricky.is_subdomain_of(&w("org.org")));
    }

    #[test]
    fn lowercase_wire_key() {
        let n = Name::from_wire(b"\x03WwW\x00").unwrap();
        let mut buf = [0u8; MAX_NAME_LEN];
        assert_eq!(n.lowercase_wire(&mut buf), b"\x03www\x00");
    }

    #[test]
    fn compressed_walker_rules() {
        // header (12) + "a." at 12 + pointer at 15 to 12
        let mut m = vec![0u8; 12];
        m.extend_from_slice(b"\x01a\x00\xC0\x0C");
        let wk = walk_compressed(&m, 15, m.len()).unwrap();
        assert_eq!((wk.end, wk.wire_len), (17, 3));
        // forward pointer
        let mut f = vec![0u8; 12];
        f.extend_from_slice(b"\xC0\x0E\x00");
        assert_eq!(
            walk_compressed(&f, 12, f.len()).unwrap_err(),
            NameError::BadPointer
        );
        // self pointer
        let mut s = vec![0u8; 12];
        s.extend_from_slice(b"\xC0\x0C");
        assert_eq!(
            walk_compressed(&s, 12, s.len()).unwrap_err(),
            NameError::BadPointer
        );
        // into the header
        let mut h = vec![0u8; 12];
        h.extend_from_slice(b"\xC0\x04");
        assert_eq!(
            walk_compressed(&h, 12, h.len()).unwrap_err(),
            NameError::BadPointer
        );
        // pointer cut off
        let mut t = vec![0u8; 12];
        t.push(0xC0);
        assert_eq!(
            walk_compressed(&t, 12, t.len()).unwrap_err(),
            NameError::Truncated
        );
        // decompressed length over 255 through pointers
        let mut long = vec![0u8; 12];
        for _ in 0..3 {
            long.push(63);
            long.extend_from_slice(&[b'a'; 63]);
        }
        long.push(0);
        let p = long.len();
        long.push(63);
        long.extend_from_slice(&[b'b'; 63]);
        long.extend_from_slice(&[0xC0, 0x0C]);
        assert_eq!(
            walk_compressed(&long, p, long.len()).unwrap_err(),
            NameError::NameTooLong
        );
    }

    #[test]
    fn lowercase_word_matches_the_byte_rule_for_every_byte_in_every_position() {
        for b in 0..=255u8 {
            for pos in 0..8 {
                let mut bytes = *b"aZ0.-_\xff@";
                bytes[pos] = b;
                let got = lowercase_word(u64::from_ne_bytes(bytes)).to_ne_bytes();
                assert_eq!(
                    got,
                    bytes.map(|c| c.to_ascii_lowercase()),
                    "byte {b:#x} at {pos}"
                );
            }
        }
    }

    #[test]
    fn names_hash_by_lowercase_words_and_compare_ignoring_case() {
        let words = |n: &[u8]| {
            let mut v = Vec::new();
            Name::from_wire(n)
                .unwrap()
                .for_each_lowercase_word(|w| v.push(w));
            v
        };
        for name in [
            "a.",
            "WwW.ExAmple.ORG.",
            "abcdefg.",
            "x.abcdefghijklmnop.q.",
        ] {
            let mixed = name_to_wire(name).unwrap();
            let lower = name_to_wire(&name.to_ascii_lowercase()).unwrap();
            assert_eq!(words(&mixed), words(&lower), "{name}");
            let n = Name::from_wire(&mixed).unwrap();
            assert!(n.eq_lowercase(&lower), "{name}");
            let mut other = lower.clone();
            *other.last_mut().unwrap() = 1;
            assert!(!n.eq_lowercase(&other), "{name}");
            assert!(!n.eq_lowercase(&lower[1..]), "{name}");
        }
        assert_ne!(
            words(&name_to_wire("a.b.").unwrap()),
            words(&name_to_wire("b.a.").unwrap())
        );
    }
}
