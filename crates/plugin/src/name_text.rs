//! A query name's presentation form on the stack: plugins that match names as text, as
//! CoreDNS's do on `state.Name()` (template's `match`, rewrite's rules), look at every
//! query without allocating.

use crate::wire::Name;
use std::fmt;

/// The longest presentation form of a name: 255 wire bytes, each at most `\DDD`.
const NAME_TEXT: usize = 1024;

/// A name's lower-cased presentation form (CoreDNS's `state.Name()`), in a fixed buffer.
pub struct NameText {
    buf: [u8; NAME_TEXT],
    len: usize,
}

impl fmt::Write for NameText {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let Some(dst) = self.buf.get_mut(self.len..end) else {
            return Err(fmt::Error);
        };
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

impl NameText {
    /// `name` lower-cased, escaped as miekg prints it.
    pub fn of(name: &Name<'_>) -> Self {
        let mut t = NameText {
            buf: [0; NAME_TEXT],
            len: 0,
        };
        if name.write_lowercase(&mut t).is_err() {
            t.len = 0;
        }
        t
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
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
