//! How a rule matches a name (CoreDNS's `exact`, `prefix`, `suffix`, `substring`, `regex`)
//! and what a match rewrites it to. Names are CoreDNS's `state.Name()`: lower-cased
//! presentation form with the final dot.

use regex::Regex;

/// CoreDNS's limit on a pattern's length (against a costly compile of hostile input).
pub const MAX_REGEX_LEN: usize = 10000;

/// A name pattern of a rule.
#[derive(Debug)]
pub enum Pattern {
    /// The whole name.
    Exact(String),
    /// The name starts with it.
    Prefix(String),
    /// The name ends with it.
    Suffix(String),
    /// The name contains it.
    Substring(String),
    /// The expression finds a match in the name (unanchored, as Go's `FindStringSubmatch`).
    Regex(Regex),
}

impl Pattern {
    /// The pattern of match type `kind` (already lower-cased) over `from`, `None` for a type
    /// CoreDNS does not have. `from` is taken as given: callers normalise names first.
    pub fn new(kind: &str, from: &str) -> Result<Option<Pattern>, String> {
        Ok(Some(match kind {
            "exact" => Pattern::Exact(from.to_string()),
            "prefix" => Pattern::Prefix(from.to_string()),
            "suffix" => Pattern::Suffix(from.to_string()),
            "substring" => Pattern::Substring(from.to_string()),
            "regex" => Pattern::Regex(compile(from)?),
            _ => return Ok(None),
        }))
    }

    /// Whether `name` matches.
    pub fn matches(&self, name: &str) -> bool {
        match self {
            Pattern::Exact(s) => name == s,
            Pattern::Prefix(s) => name.starts_with(s.as_str()),
            Pattern::Suffix(s) => name.ends_with(s.as_str()),
            Pattern::Substring(s) => name.contains(s.as_str()),
            Pattern::Regex(r) => r.is_match(name),
        }
    }

    /// `name` rewritten with `to` when it matches (CoreDNS's name rules): the whole name, the
    /// matched prefix or suffix replaced, every occurrence of the substring replaced, or
    /// `to` with the expression's `{N}` groups filled in.
    pub fn rewrite(&self, name: &str, to: &str) -> Option<String> {
        match self {
            Pattern::Exact(s) => (name == s).then(|| to.to_string()),
            Pattern::Prefix(s) => name
                .strip_prefix(s.as_str())
                .map(|rest| format!("{to}{rest}")),
            Pattern::Suffix(s) => name
                .strip_suffix(s.as_str())
                .map(|rest| format!("{rest}{to}")),
            Pattern::Substring(s) => name
                .contains(s.as_str())
                .then(|| name.replace(s.as_str(), to)),
            Pattern::Regex(r) => substitute(r, name, to),
        }
    }
}

/// A pattern compiled as CoreDNS compiles it (length limit, RE2 syntax).
pub fn compile(pattern: &str) -> Result<Regex, String> {
    if pattern.len() > MAX_REGEX_LEN {
        return Err(format!(
            "regex pattern too long: {} > {MAX_REGEX_LEN}",
            pattern.len()
        ));
    }
    Regex::new(pattern).map_err(|_| format!("invalid regex matching pattern: {pattern}"))
}

/// `template` with each `{N}` replaced by group N of the first match of `re` in `src`
/// (an unmatched group by nothing); `None` when `re` does not match.
pub fn substitute(re: &Regex, src: &str, template: &str) -> Option<String> {
    let caps = re.captures(src)?;
    let mut out = String::with_capacity(template.len() + src.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let group = after
            .find('}')
            .and_then(|close| after[..close].parse::<usize>().ok().map(|n| (n, close)));
        match group {
            Some((n, close)) if n <= 100 => {
                out.push_str(caps.get(n).map_or("", |m| m.as_str()));
                rest = &after[close + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Some(out)
}

/// How many distinct `{N}` groups `s` uses (CoreDNS's `getSubExprUsage`, N up to 100).
pub fn groups_used(s: &str) -> usize {
    (0..=100)
        .filter(|i| s.contains(&format!("{{{i}}}")))
        .count()
}

/// CoreDNS's `isValidRegexPattern`: `from` compiled, and `to` using no more groups than it
/// has.
pub fn regex_rule(from: &str, to: &str) -> Result<Regex, String> {
    let re = compile(from)?;
    if groups_used(to) > re.captures_len() - 1 {
        return Err(format!(
            "the rewrite regex pattern ({to}) uses more subexpressions than its corresponding matching regex pattern ({from})"
        ));
    }
    Ok(re)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_matches_and_rewrites_as_coredns() {
        let p = |k, f: &str| Pattern::new(k, f).unwrap().unwrap();
        assert_eq!(
            p("exact", "a.b.").rewrite("a.b.", "c.d."),
            Some("c.d.".into())
        );
        assert_eq!(p("exact", "a.b.").rewrite("x.a.b.", "c.d."), None);
        assert_eq!(
            p("prefix", "foo.").rewrite("foo.example.", "bar."),
            Some("bar.example.".into())
        );
        assert_eq!(
            p("suffix", ".schmoogle.com.").rewrite("www.schmoogle.com.", ".google.com."),
            Some("www.google.com.".into())
        );
        assert_eq!(
            p("substring", "service.us-west-1.example.org.").rewrite(
                "ftp.service.us-west-1.example.org.",
                "service.us-west-1.consul."
            ),
            Some("ftp.service.us-west-1.consul.".into())
        );
        assert_eq!(
            p("regex", r"(.*)-(us-west-1)\.example\.org")
                .rewrite("ftp-us-west-1.example.org.", "{1}.service.{2}.consul."),
            Some("ftp.service.us-west-1.consul.".into())
        );
        assert!(Pattern::new("glob", "x").unwrap().is_none());
    }

    #[test]
    fn substitution_leaves_what_is_no_group_alone() {
        let re = Regex::new(r"^(a)(b)?\.").unwrap();
        assert_eq!(
            substitute(&re, "a.", "{1}-{2}-{x}-{").as_deref(),
            Some("a--{x}-{")
        );
    }

    #[test]
    fn a_replacement_may_not_use_groups_the_pattern_lacks() {
        assert!(regex_rule("(a)", "{1}").is_ok());
        let e = regex_rule("(a)", "{1}{2}").unwrap_err();
        assert!(e.contains("uses more subexpressions"), "{e}");
        assert!(compile("(").unwrap_err().contains("invalid regex"));
        assert!(
            compile(&"a".repeat(10001))
                .unwrap_err()
                .contains("too long")
        );
    }
}
