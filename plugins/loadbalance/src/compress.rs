//! Writing names into a message being re-encoded, compressed against the names already in
//! it (RFC 1035 §4.1.4), so that a reordered reply is no larger than it needs to be and
//! every pointer in it points at a name of the new message.

/// Where the labels of earlier names start in the message being written (offsets a pointer
/// can reach, below 0x4000).
#[derive(Debug, Default)]
pub struct Table {
    starts: Vec<u16>,
}

impl Table {
    /// Forgets the names of the last message (the vector's room is kept).
    pub fn clear(&mut self) {
        self.starts.clear();
    }

    /// Notes the labels of the uncompressed name at `at` in `msg` (the question's).
    pub fn note_name(&mut self, msg: &[u8], mut at: usize) {
        while at < msg.len() && msg[at] != 0 && msg[at] & 0xC0 == 0 {
            self.note(at);
            at += 1 + usize::from(msg[at]);
        }
    }

    /// Forgets the names noted at or after `at` (a record written there was taken back).
    pub fn forget_from(&mut self, at: usize) {
        self.starts.retain(|&s| usize::from(s) < at);
    }

    fn note(&mut self, at: usize) {
        if let Ok(off) = u16::try_from(at)
            && off < 0x4000
        {
            self.starts.push(off);
        }
    }

    /// Appends `name` (uncompressed wire form) to `out`: its longest suffix already in `out`
    /// as a pointer, the labels before it written out and noted for later names. With
    /// `compress` false (names in RDATA that RFC 3597 §4 says must not be compressed) it is
    /// written whole and not noted.
    pub fn write(&mut self, out: &mut Vec<u8>, name: &[u8], compress: bool) {
        if !compress {
            out.extend_from_slice(name);
            return;
        }
        let mut p = 0;
        while p < name.len() && name[p] != 0 {
            if let Some(&at) = self
                .starts
                .iter()
                .find(|&&at| same(out, usize::from(at), &name[p..]))
            {
                self.write_labels(out, &name[..p]);
                out.extend_from_slice(&(0xC000 | at).to_be_bytes());
                return;
            }
            p += 1 + usize::from(name[p]);
        }
        self.write_labels(out, &name[..p]);
        out.push(0);
    }

    fn write_labels(&mut self, out: &mut Vec<u8>, labels: &[u8]) {
        let mut p = 0;
        while p < labels.len() {
            let l = 1 + usize::from(labels[p]);
            self.note(out.len());
            out.extend_from_slice(&labels[p..p + l]);
            p += l;
        }
    }
}

/// Whether the (possibly compressed) name at `at` in `msg` is `name`, byte for byte.
fn same(msg: &[u8], mut at: usize, name: &[u8]) -> bool {
    let mut q = 0;
    for _ in 0..256 {
        let Some(&c) = msg.get(at) else { return false };
        if c & 0xC0 == 0xC0 {
            let Some(&lo) = msg.get(at + 1) else {
                return false;
            };
            at = (usize::from(c & 0x3F) << 8) | usize::from(lo);
            continue;
        }
        let l = usize::from(c);
        if name.get(q) != Some(&c) {
            return false;
        }
        if c == 0 {
            return true;
        }
        match (msg.get(at + 1..at + 1 + l), name.get(q + 1..q + 1 + l)) {
            (Some(a), Some(b)) if a == b => {}
            _ => return false,
        }
        at += 1 + l;
        q += 1 + l;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringdns_plugin::wire::{expand_name, name_to_wire};

    #[test]
    fn suffixes_become_pointers_and_expand_back() {
        let mut out = vec![0u8; 12];
        out.extend(name_to_wire("www.example.org").unwrap());
        let mut t = Table::default();
        t.note_name(&out, 12);
        let a = out.len();
        t.write(&mut out, &name_to_wire("web.example.org").unwrap(), true);
        assert_eq!(out.len() - a, 4 + 2, "web + a pointer to example.org");
        let b = out.len();
        t.write(&mut out, &name_to_wire("web.example.org").unwrap(), true);
        assert_eq!(out.len() - b, 2, "a pointer to the name just written");
        let c = out.len();
        t.write(&mut out, &name_to_wire("other.net").unwrap(), true);
        let d = out.len();
        t.write(&mut out, &name_to_wire("x.example.org").unwrap(), false);
        for (at, want) in [
            (a, "web.example.org"),
            (b, "web.example.org"),
            (c, "other.net"),
            (d, "x.example.org"),
        ] {
            let mut got = Vec::new();
            expand_name(&out, at, out.len(), &mut got).unwrap();
            assert_eq!(got, name_to_wire(want).unwrap());
        }
        assert_eq!(out.len() - d, name_to_wire("x.example.org").unwrap().len());
        let e = out.len();
        t.write(&mut out, &[0], true);
        assert_eq!(&out[e..], [0], "the root is written as it is");
    }
}
