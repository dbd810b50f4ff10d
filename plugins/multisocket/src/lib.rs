//! multisocket: how many SO_REUSEPORT socket pairs (UDP and TCP) a listener opens, as
//! CoreDNS's `plugin/multisocket`. Configuration only.
//!
//! ringdns already opens one pair per core on every listener (CoreDNS opens one server per
//! listener without this plugin). `multisocket N` makes it N pairs, spread over the cores in
//! turn: fewer than the cores leaves the last cores without a socket of that listener (they
//! serve its queries only when another of their sockets does), more gives some cores two
//! loops on one port. Without a number it is one per core, ringdns's default.

#![forbid(unsafe_code)]

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::{BlockSetup, ConfigOnly, Plugin};

/// The directive, for errors.
const NAME: &str = "multisocket";

/// CoreDNS's `maxNumSockets`.
const MAX_SOCKETS: usize = 1024;

/// Configuration-only: records the count in the block setup.
pub struct Multisocket;

/// Go's `strconv.Atoi` message for text that is not a number.
fn atoi(text: &str) -> Result<i64, String> {
    text.parse::<i64>().map_err(|e| {
        let why = match e.kind() {
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                "value out of range"
            }
            _ => "invalid syntax",
        };
        format!("strconv.Atoi: parsing \"{text}\": {why}")
    })
}

impl Plugin for Multisocket {
    const NAME: &'static str = NAME;
    type Config = ();
    type Place = ConfigOnly;

    /// `multisocket [NUM_SOCKETS]`, once per block, no block of options.
    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<(), Error> {
        let mut seen = false;
        while d.next() {
            if std::mem::replace(&mut seen, true) {
                return Err(d.plugin_arg_err(NAME));
            }
            let args = d.remaining_args();
            if args.len() > 1 || d.next_block() {
                return Err(d.plugin_arg_err(NAME));
            }
            block.sockets = match args.first() {
                // CoreDNS's GOMAXPROCS: one per core, as ringdns's listeners have anyway.
                None => None,
                Some(text) => {
                    let n = atoi(text)
                        .map_err(|e| d.plugin_err(NAME, format!("invalid num sockets: {e}")))?;
                    if n < 1 {
                        return Err(d.plugin_err(
                            NAME,
                            format!("num sockets can not be zero or negative: {n}"),
                        ));
                    }
                    if n > MAX_SOCKETS as i64 {
                        return Err(d.plugin_err(
                            NAME,
                            format!("num sockets exceeds maximum ({MAX_SOCKETS}): {n}"),
                        ));
                    }
                    Some(n as usize)
                }
            };
        }
        Ok(())
    }
}

ringdns_plugin::export!(Multisocket);

#[cfg(test)]
mod tests {
    use super::*;

    fn sockets(text: &str) -> Result<Option<usize>, String> {
        ringdns_testkit::setup::<Multisocket>(&format!(". {{\n{text}\n}}")).map(|b| b.sockets)
    }

    #[test]
    fn counts_as_coredns_parses_them() {
        assert_eq!(sockets("multisocket"), Ok(None));
        assert_eq!(sockets("multisocket 2"), Ok(Some(2)));
        assert_eq!(sockets("multisocket 1024"), Ok(Some(1024)));
        assert_eq!(sockets(" multisocket 1"), Ok(Some(1)));
        for (text, want) in [
            (
                "multisocket text",
                "plugin/multisocket: invalid num sockets: strconv.Atoi: parsing \"text\": invalid syntax",
            ),
            (
                "multisocket 0",
                "num sockets can not be zero or negative: 0",
            ),
            (
                "multisocket -1",
                "num sockets can not be zero or negative: -1",
            ),
            (
                "multisocket 1025",
                "num sockets exceeds maximum (1024): 1025",
            ),
            (
                "multisocket 2 2",
                "Wrong argument count or unexpected line ending after '2'",
            ),
            ("multisocket 2 {\n block\n}", "Wrong argument count"),
            ("multisocket 2\nmultisocket 3", "Wrong argument count"),
        ] {
            let e = sockets(text).unwrap_err();
            assert!(e.contains(want), "{text}: {e}");
            assert!(e.starts_with("Corefile:"), "{e}");
        }
    }
}
