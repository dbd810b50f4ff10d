//! resolv.conf files, read as CoreDNS reads them through miekg/dns `ClientConfigFromFile`:
//! forward's upstreams (`forward . /etc/resolv.conf`) and autopath's search path come from
//! the same reading. Lines are split at white space and only their first field is looked
//! at: `nameserver` adds its second field (not checked to be an address), `search` replaces
//! the search list with the line's other fields, `domain` with its one name (or none); a
//! later line wins. Everything else, comments included, is skipped.

use crate::files::{ReadError, read_limited};
use std::path::Path;

/// The most a resolv.conf may hold; more is not one (and reading `/dev/zero` must end).
pub const MAX_RESOLV_CONF: u64 = 1 << 20;

/// What CoreDNS's plugins use of a resolv.conf (miekg's `ClientConfig`), as written.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ResolvConf {
    /// The `nameserver` entries, in order (`Servers`).
    pub servers: Vec<String>,
    /// The search list (`Search`), not normalised.
    pub search: Vec<String>,
}

/// Parses resolv.conf text as miekg's `ClientConfigFromReader` does.
pub fn parse(text: &str) -> ResolvConf {
    let mut c = ResolvConf::default();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.first().copied() {
            Some("nameserver") => c.servers.extend(f.get(1).map(|s| s.to_string())),
            Some("domain") => c.search = f.get(1).map(|d| vec![d.to_string()]).unwrap_or_default(),
            Some("search") => c.search = f[1..].iter().map(|s| s.to_string()).collect(),
            _ => {}
        }
    }
    c
}

/// Reads and parses the resolv.conf at `path`; the error as Go words it.
pub fn read(path: &Path) -> Result<ResolvConf, ReadError> {
    read_limited(path, MAX_RESOLV_CONF).map(|b| parse(&String::from_utf8_lossy(&b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nameserver_lines_only() {
        let text = "# comment\nsearch example.org\nnameserver 10.0.0.1\n\
                    nameserver\t::1%eth0  # trailing\n;nameserver 9.9.9.9\nnameserver\n\
                    options ndots:5\r\nnameserver 10.0.0.2\r\n";
        assert_eq!(parse(text).servers, ["10.0.0.1", "::1%eth0", "10.0.0.2"]);
    }

    #[test]
    fn the_last_search_or_domain_line_wins() {
        let search = |t: &str| parse(t).search;
        let text = "nameserver 1.2.3.4\ndomain foo.com\nsearch bar.com baz.com\noptions ndots:5\n";
        assert_eq!(search(text), ["bar.com", "baz.com"]);
        assert_eq!(search("search a b\ndomain c\n"), ["c"]);
        assert!(search("search a\ndomain\n").is_empty());
        assert!(search("search\n").is_empty());
        assert!(search("nameserver 10.0.0.1\n").is_empty());
    }

    #[test]
    fn only_the_keyword_is_looked_at() {
        // miekg does not know comments: a `#` after the names is one more name, and
        // a commented-out line or a keyword in capitals is no keyword.
        let search = |t: &str| parse(t).search;
        assert_eq!(search("search a.org # x\n"), ["a.org", "#", "x"]);
        assert!(search("# search a.org\nSEARCH b.org\n").is_empty());
        assert_eq!(search("\t search \t a.org\tb.org \n"), ["a.org", "b.org"]);
    }

    #[test]
    fn a_file_is_read_whole() {
        let dir = std::env::temp_dir().join(format!("ringdns-resolvconf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("resolv.conf");
        std::fs::write(&path, "nameserver 10.0.0.1\nsearch a.test b.test\n").unwrap();
        let c = read(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(c.servers, ["10.0.0.1"]);
        assert_eq!(c.search, ["a.test", "b.test"]);
        let e = read(Path::new("/nonexistent/resolv.conf")).unwrap_err();
        assert_eq!(
            e.text,
            "open /nonexistent/resolv.conf: no such file or directory"
        );
        assert!(e.not_found);
    }
}
