//! A query name's presentation form on the stack: plugins that match names as text, as
//! CoreDNS's do on `state.Name()` (template's `match`, rewrite's rules), look at every
//! query without allocating.

use crate::wire::Name;

/// The longest presentation form of a name: 255 wire bytes, each at most `\DDD`.
const NAME_TEXT: usize = 1024;

/// A name's lower-cased presentation form (CoreDNS's `state.Name()`), in a fixed buffer.
pub struct NameText {
    buf: [u8; NAME_TEXT],
    len: usize,
}

impl NameText {
    /// An empty buffer, for a plugin instance that keeps one per core and [`NameText::set`]s
    /// it per query (no 1 KiB of zeroes and copy per query).
    pub const fn new() -> Self {
        NameText {
            buf: [0; NAME_TEXT],
            len: 0,
        }
    }

    /// `name` lower-cased, escaped as miekg prints it.
    pub fn of(name: &Name<'_>) -> Self {
        let mut t = NameText::new();
        t.set(name);
        t
    }

    /// Replaces the text with `name`'s and gives it.
    #[inline]
    pub fn set(&mut self, name: &Name<'_>) -> &str {
        self.len = name.lowercase_into(&mut self.buf).unwrap_or(0);
        self.as_str()
    }

    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

impl Default for NameText {
    fn default() -> Self {
        NameText::new()
    }
}

#[cfg(test)]
mod tests {
    use super::NameText;
    use crate::wire::Name;

    #[test]
    fn a_name_reads_lower_cased_and_escaped() {
        let wire = b"\x03W.w\x07Example\x00";
        let t = NameText::of(&Name::from_wire(wire).unwrap());
        assert_eq!(t.as_str(), "w\\.w.example.");
    }
}
