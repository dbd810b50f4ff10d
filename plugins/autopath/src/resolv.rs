//! The search list of a resolv.conf, read as miekg/dns `ClientConfigFromFile` reads it
//! (what CoreDNS's autopath calls): `search` replaces the list with the line's fields,
//! `domain` with its one name (or none), a later line wins; other lines, comments included,
//! are skipped, and nothing after a keyword is checked. Errors read as Go's.

use std::io::Read;
use std::path::Path;

/// The most a resolv.conf may hold; more is not one (and reading `/dev/zero` must end).
const MAX_RESOLV_CONF: u64 = 1 << 20;

/// An OS error the way Go prints it: lower-case, without Rust's ` (os error N)` suffix.
fn go_os_error(e: &std::io::Error) -> String {
    let s = e.to_string();
    let s = match s.find(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    };
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => s,
    }
}

/// The `search` list of the resolv.conf at `path`, as written (not normalised); the error
/// as Go words it (`open PATH: no such file or directory`).
pub fn search_list(path: &str) -> Result<Vec<String>, String> {
    let mut f = std::fs::File::open(Path::new(path))
        .map_err(|e| format!("open {path}: {}", go_os_error(&e)))?;
    let mut buf = Vec::new();
    f.by_ref()
        .take(MAX_RESOLV_CONF + 1)
        .read_to_end(&mut buf)
        .map_err(|e| format!("read {path}: {}", go_os_error(&e)))?;
    if buf.len() as u64 > MAX_RESOLV_CONF {
        return Err(format!(
            "read {path}: file larger than {MAX_RESOLV_CONF} bytes"
        ));
    }
    Ok(parse_search(&String::from_utf8_lossy(&buf)))
}

/// The search list of resolv.conf `text` (miekg's `ClientConfigFromReader`, its `Search`).
pub fn parse_search(text: &str) -> Vec<String> {
    let mut search = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.first() {
            Some(&"domain") => {
                search = f.get(1).map(|d| vec![d.to_string()]).unwrap_or_default();
            }
            Some(&"search") => search = f[1..].iter().map(|s| s.to_string()).collect(),
            _ => {}
        }
    }
    search
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_search_or_domain_line_wins() {
        let text = "nameserver 1.2.3.4\ndomain foo.com\nsearch bar.com baz.com\noptions ndots:5\n";
        assert_eq!(parse_search(text), ["bar.com", "baz.com"]);
        assert_eq!(parse_search("search a b\ndomain c\n"), ["c"]);
        assert!(parse_search("search a\ndomain\n").is_empty());
        assert!(parse_search("search\n").is_empty());
        assert!(parse_search("nameserver 10.0.0.1\n").is_empty());
    }

    #[test]
    fn only_the_keyword_is_looked_at() {
        // miekg does not know comments: a `#` after the names is one more name, and
        // a commented-out line or a keyword in capitals is no keyword.
        assert_eq!(parse_search("search a.org # x\n"), ["a.org", "#", "x"]);
        assert!(parse_search("# search a.org\nSEARCH b.org\n").is_empty());
        assert_eq!(
            parse_search("\t search \t a.org\tb.org \n"),
            ["a.org", "b.org"]
        );
    }

    #[test]
    fn a_missing_file_is_gos_open_error() {
        assert_eq!(
            search_list("/nonexistent/resolv.conf").unwrap_err(),
            "open /nonexistent/resolv.conf: no such file or directory"
        );
        assert_eq!(
            search_list("").unwrap_err(),
            "open : no such file or directory"
        );
    }
}
