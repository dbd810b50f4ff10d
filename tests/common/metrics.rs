//! Reading a server's `/metrics` page in tests: scraped with a plain HTTP GET, read series
//! by series.

use super::http_get_full;
use std::time::{Duration, Instant};

/// The `/metrics` page.
pub fn scrape(port: u16) -> String {
    let (code, _, body) = http_get_full(port, "/metrics").expect("the metrics endpoint answers");
    assert_eq!(code, 200, "{body}");
    body
}

/// The label pairs of a series line (`name{a="x",b="y"} v`): values here never contain
/// `"` or `,`.
fn labels_of(set: &str) -> Vec<(String, String)> {
    set.split("\",")
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once("=\"").expect("label=\"value\"");
            (k.to_string(), v.trim_end_matches('"').to_string())
        })
        .collect()
}

/// The value of the series `name` whose labels are exactly `labels` (in any order).
pub fn value(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let mut want: Vec<(String, String)> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    want.sort();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (series, v) = line.rsplit_once(' ')?;
        let (n, set) = match series.split_once('{') {
            Some((n, rest)) => (n, rest.strip_suffix('}')?),
            None => (series, ""),
        };
        if n != name {
            continue;
        }
        let mut got = labels_of(set);
        got.sort();
        if got == want {
            return v.parse().ok();
        }
    }
    None
}

/// Scrapes until `ready` holds for the page (a few seconds at most), then returns it.
pub fn scrape_until(port: u16, ready: impl Fn(&str) -> bool) -> String {
    let t0 = Instant::now();
    loop {
        let t = scrape(port);
        if ready(&t) || t0.elapsed() > Duration::from_secs(5) {
            return t;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
