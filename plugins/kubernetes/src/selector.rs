//! Checks a label selector (`labels`, `namespace_labels`) as Kubernetes'
//! `metav1.ParseToLabelSelector` accepts it, so a bad one is a Corefile error at start, not
//! a 400 from the API server later. The selector goes to the API server as written (it is
//! the server that filters, as for CoreDNS's informers).
//!
//! Grammar (apimachinery `labels.Parse`): requirements joined by `,`; each is `KEY`, `!KEY`,
//! `KEY=VALUE`, `KEY==VALUE`, `KEY!=VALUE`, `KEY in (V,…)` or `KEY notin (V,…)`. KEY is a
//! qualified name (`[PREFIX/]NAME`: PREFIX a DNS-1123 subdomain, NAME up to 63 characters of
//! `[A-Za-z0-9._-]` that begin and end alphanumeric); VALUE is empty or such a NAME.
//! `ParseToLabelSelector` has no `>`/`<` (they are field-selector-only there).

/// Checks `text`; the error says what is wrong, as apimachinery's words it where it can.
pub fn check(text: &str) -> Result<(), String> {
    let mut rest = text.trim();
    if rest.is_empty() {
        return Ok(());
    }
    loop {
        rest = requirement(rest)?.trim_start();
        match rest.strip_prefix(',') {
            Some(r) => rest = r.trim_start(),
            None if rest.is_empty() => return Ok(()),
            None => {
                return Err(format!(
                    "found '{}', expected: ',' or 'end of string'",
                    first(rest)
                ));
            }
        }
    }
}

fn first(s: &str) -> &str {
    let end = s
        .char_indices()
        .find(|(_, c)| c.is_whitespace() || *c == ',')
        .map_or(s.len(), |(i, _)| i.max(1));
    &s[..end]
}

/// One requirement at the start of `s`; what follows it.
fn requirement(s: &str) -> Result<&str, String> {
    let (negated, s) = match s.strip_prefix('!') {
        Some(r) => (true, r.trim_start()),
        None => (false, s),
    };
    let key_end = s
        .find(|c: char| c.is_whitespace() || matches!(c, '=' | '!' | ',' | '(' | ')'))
        .unwrap_or(s.len());
    let key = &s[..key_end];
    if key.is_empty() {
        return Err("found '', expected: identifier".into());
    }
    qualified_name(key)?;
    let rest = s[key_end..].trim_start();
    if negated {
        return Ok(rest);
    }
    if rest.is_empty() || rest.starts_with(',') {
        return Ok(rest);
    }
    for op in ["==", "!=", "="] {
        if let Some(r) = rest.strip_prefix(op) {
            let r = r.trim_start();
            let end = r
                .find(|c: char| c.is_whitespace() || c == ',')
                .unwrap_or(r.len());
            value(&r[..end])?;
            return Ok(&r[end..]);
        }
    }
    for op in ["notin", "in"] {
        if let Some(r) = rest.strip_prefix(op) {
            let r = r.trim_start();
            let Some(r) = r.strip_prefix('(') else {
                return Err(format!("found '{}', expected: '('", first(r)));
            };
            let Some(close) = r.find(')') else {
                return Err("found '', expected: ')'".into());
            };
            for v in r[..close].split(',') {
                value(v.trim())?;
            }
            return Ok(&r[close + 1..]);
        }
    }
    Err(format!(
        "found '{}', expected: in, notin, =, ==, !=, gt, lt",
        first(rest)
    ))
}

/// A label key: `[PREFIX/]NAME`.
fn qualified_name(key: &str) -> Result<(), String> {
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if let Some(p) = prefix
        && (p.is_empty() || p.len() > 253 || !p.split('.').all(dns_label))
    {
        return Err(format!(
            "key: Invalid value: \"{key}\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
        ));
    }
    if !label_name(name) {
        return Err(format!(
            "key: Invalid value: \"{key}\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        ));
    }
    Ok(())
}

/// A label value: empty or a NAME.
fn value(v: &str) -> Result<(), String> {
    if v.is_empty() || label_name(v) {
        return Ok(());
    }
    Err(format!(
        "values[0][{v}]: Invalid value: \"{v}\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
    ))
}

fn label_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

fn dns_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn accepts_what_kubernetes_accepts() {
        for ok in [
            "",
            "environment=production",
            "environment==production",
            "tier!=frontend",
            "environment in (production, qa)",
            "tier notin (frontend,backend)",
            "partition",
            "!partition",
            "app.kubernetes.io/name=coredns,team in (a,b), !legacy",
            "a=",
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn rejects_what_kubernetes_rejects() {
        for bad in [
            "environment=production=2",
            "-bad=x",
            "a=-b",
            "a in x",
            "a in (x",
            "a > 5",
            "Upper.Case/x=y",
            "a=b c=d",
            "=x",
        ] {
            assert!(check(bad).is_err(), "{bad}");
        }
    }
}
