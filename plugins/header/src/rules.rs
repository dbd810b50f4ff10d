//! header's rules as CoreDNS's `newRules` reads them, folded into the two masks they come to:
//! rules apply in order, so the last one that names a flag decides it.

/// The flags a rule can name: CoreDNS's `aa`, `ra`, `rd`, and `ad` and `cd`.
const FLAGS: [(&str, u16); 5] = [
    ("aa", ringdns_plugin::wire::flags::AA),
    ("ra", ringdns_plugin::wire::flags::RA),
    ("rd", ringdns_plugin::wire::flags::RD),
    ("ad", ringdns_plugin::wire::flags::AD),
    ("cd", ringdns_plugin::wire::flags::CD),
];

/// What the rules of one selector do to a header's flags word.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Masks {
    /// Bits set.
    pub set: u16,
    /// Bits cleared.
    pub clear: u16,
}

impl Masks {
    /// Whether no rule named a flag.
    pub fn is_empty(&self) -> bool {
        self.set == 0 && self.clear == 0
    }

    /// The flags word once the rules are applied.
    pub fn apply(&self, word: u16) -> u16 {
        (word & !self.clear) | self.set
    }

    /// Adds the rules of one line, `ACTION FLAGS...` (CoreDNS's `newRules`, its messages).
    pub fn add(&mut self, action: &str, flags: &[String]) -> Result<(), String> {
        if action.is_empty() {
            return Err("no flag action provided".into());
        }
        if flags.is_empty() {
            return Err("invalid length for flags, at least one should be provided".into());
        }
        let action = action.to_ascii_lowercase();
        let set = match action.as_str() {
            "set" => true,
            "clear" => false,
            _ => {
                return Err(format!(
                    "unknown flag action={action}, should be set or clear"
                ));
            }
        };
        // All of the line's flags are checked before any applies, as CoreDNS builds the
        // line's rules first.
        let mut bits = Vec::with_capacity(flags.len());
        for f in flags {
            let f = f.to_ascii_lowercase();
            match FLAGS.iter().find(|(name, _)| *name == f) {
                Some((_, bit)) => bits.push(*bit),
                None => return Err(format!("unknown/unsupported flag={f}")),
            }
        }
        for bit in bits {
            if set {
                self.set |= bit;
                self.clear &= !bit;
            } else {
                self.clear |= bit;
                self.set &= !bit;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringdns_plugin::wire::flags::{AA, AD, CD, QR, RA, RD};

    fn masks(lines: &[(&str, &[&str])]) -> Result<Masks, String> {
        let mut m = Masks::default();
        for (action, flags) in lines {
            let flags: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
            m.add(action, &flags)?;
        }
        Ok(m)
    }

    #[test]
    fn the_last_rule_for_a_flag_wins() {
        let m = masks(&[("set", &["ra", "AA"]), ("CLEAR", &["rd", "aa"])]).unwrap();
        assert_eq!(
            m,
            Masks {
                set: RA,
                clear: RD | AA
            }
        );
        assert_eq!(m.apply(QR | RD | AA), QR | RA);
        let m = masks(&[("set", &["ad", "cd"])]).unwrap();
        assert_eq!(m.apply(0), AD | CD);
        assert!(masks(&[]).unwrap().is_empty());
    }

    #[test]
    fn coredns_refuses_these_lines() {
        for (action, flags, want) in [
            ("", &["aa"][..], "no flag action provided"),
            (
                "set",
                &[][..],
                "invalid length for flags, at least one should be provided",
            ),
            (
                "toggle",
                &["aa"][..],
                "unknown flag action=toggle, should be set or clear",
            ),
            ("set", &["aa", "tc"][..], "unknown/unsupported flag=tc"),
        ] {
            assert_eq!(masks(&[(action, flags)]), Err(want.to_string()));
        }
    }
}
