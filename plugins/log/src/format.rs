//! The log line format: CoreDNS's `{placeholder}` syntax compiled once at setup into pieces,
//! rendered per query into the core's buffer without allocating.

use ringdns_plugin::Request;
use ringdns_plugin::replacer;

/// CoreDNS's Common Log Format, the default.
pub const COMMON: &str = "{remote}:{port} - {>id} \"{type} {class} {name} {proto} {size} {>do} {>bufsize}\" {rcode} {>rflags} {rsize} {duration}";

/// CoreDNS's combined format: common plus the opcode.
pub const COMBINED: &str = "{remote}:{port} - {>id} \"{type} {class} {name} {proto} {size} {>do} {>bufsize}\" {rcode} {>rflags} {rsize} {duration} \"{>opcode}\"";

/// A piece of a compiled format: the shared replacer's (CoreDNS's log uses
/// `plugin/pkg/replacer` too).
pub use ringdns_plugin::replacer::Piece;

/// What the log line says of the reply; taken after the rest of the chain returned.
pub use ringdns_plugin::replacer::Recorded as Outcome;

/// Compiles a format; `{common}` and `{combined}` expand to CoreDNS's formats, the rest is
/// CoreDNS's replacer syntax (unknown `{…}` placeholders stay literal text so a typo shows
/// in the output).
pub fn compile(format: &str) -> Vec<Piece> {
    let format = match format {
        "{common}" => COMMON,
        "{combined}" => COMBINED,
        f => f,
    };
    replacer::parse(format)
}

/// Appends one rendered line (without the `[INFO] ` prefix or newline) to `out`.
pub fn render(pieces: &[Piece], req: &Request<'_>, o: &Outcome, out: &mut String) {
    replacer::render(pieces, req, Some(o), out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn common_is_the_default_shape() {
        let p = compile("{common}");
        assert_eq!(p, compile(COMMON));
        assert_eq!(p[0], Piece::Remote);
        assert_eq!(p[1], Piece::Lit(":".into()));
    }

    #[test]
    fn unknown_placeholders_stay_literal() {
        assert_eq!(
            compile("a {bogus} {name} {"),
            vec![
                Piece::Lit("a {bogus} ".into()),
                Piece::Name,
                Piece::Lit(" {".into())
            ]
        );
    }

    #[test]
    fn metadata_labels_print_their_value_or_a_dash() {
        let p = compile("{/forward/upstream} {/zone/wildcard} {/x/y}");
        assert_eq!(p[0], Piece::Metadata("forward/upstream".into()));
        let packet = [0u8, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1];
        let q = ringdns_plugin::wire::Query::parse(&packet).unwrap();
        let at = "127.0.0.1:53".parse().unwrap();
        let mut reply = Vec::new();
        let mut req = Request::new(
            q,
            at,
            at,
            ringdns_plugin::Proto::Udp,
            ".",
            "dns://:53",
            &mut reply,
            false,
        );
        let o = Outcome {
            rcode: 0,
            rsize: 0,
            flags: 0,
            duration: Duration::ZERO,
        };
        let mut line = String::new();
        render(&p, &req, &o, &mut line);
        assert_eq!(line, "- - -", "no metadata plugin");
        let meta = ringdns_plugin::metadata::Metadata::default();
        let sub = req.with_metadata(&meta);
        sub.set_metadata("forward/upstream", "127.0.0.1:5300");
        sub.set_metadata("x/y", "");
        line.clear();
        render(&p, &sub, &o, &mut line);
        assert_eq!(line, "127.0.0.1:5300 - ", "an empty value prints empty");
    }
}
