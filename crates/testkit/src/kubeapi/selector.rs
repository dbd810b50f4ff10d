//! Label selectors (`a=b`, `a==b`, `a!=b`, `a`, `!a`, `a in (x,y)`, `a notin (x,y)`) and
//! field selectors (`path=v`, `path==v`, `path!=v` on dotted JSON paths such as
//! `metadata.name` or `status.phase`), ANDed by commas, as the API server applies them.

use serde_json::Value;

/// One requirement of a selector.
#[derive(Debug, Clone, PartialEq)]
enum Req {
    Eq(String, String),
    Ne(String, String),
    Exists(String),
    Absent(String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
}

/// A parsed label or field selector.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Selector {
    reqs: Vec<Req>,
    field: bool,
}

/// Splits at commas outside parentheses.
fn terms(s: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect()
}

fn set(s: &str) -> Result<Vec<String>, String> {
    let inner = s
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| format!("bad set {s:?}"))?;
    Ok(inner.split(',').map(|v| v.trim().to_string()).collect())
}

impl Selector {
    /// Parses a labelSelector.
    pub fn labels(s: &str) -> Result<Selector, String> {
        let mut reqs = Vec::new();
        for t in terms(s) {
            let r = if let Some((k, v)) = t.split_once("!=") {
                Req::Ne(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = t.split_once("==").or_else(|| t.split_once('=')) {
                Req::Eq(k.trim().into(), v.trim().into())
            } else if let Some(k) = t.strip_prefix('!') {
                Req::Absent(k.trim().into())
            } else if let Some((k, rest)) = t.split_once(" notin ") {
                Req::NotIn(k.trim().into(), set(rest)?)
            } else if let Some((k, rest)) = t.split_once(" in ") {
                Req::In(k.trim().into(), set(rest)?)
            } else if t.contains([' ', '(', ')']) {
                return Err(format!("unable to parse requirement {t:?}"));
            } else {
                Req::Exists(t.into())
            };
            reqs.push(r);
        }
        Ok(Selector { reqs, field: false })
    }

    /// Parses a fieldSelector.
    pub fn fields(s: &str) -> Result<Selector, String> {
        let mut reqs = Vec::new();
        for t in terms(s) {
            let r = if let Some((k, v)) = t.split_once("!=") {
                Req::Ne(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = t.split_once("==").or_else(|| t.split_once('=')) {
                Req::Eq(k.trim().into(), v.trim().into())
            } else {
                return Err(format!("invalid field selector term {t:?}"));
            };
            reqs.push(r);
        }
        Ok(Selector { reqs, field: true })
    }

    fn value<'a>(&self, obj: &'a Value, key: &str) -> Option<&'a str> {
        if self.field {
            let mut v = obj;
            for part in key.split('.') {
                v = v.get(part)?;
            }
            v.as_str()
        } else {
            obj["metadata"]["labels"].get(key)?.as_str()
        }
    }

    /// Whether `obj` satisfies every requirement.
    pub fn matches(&self, obj: &Value) -> bool {
        self.reqs.iter().all(|r| match r {
            Req::Eq(k, v) => {
                self.value(obj, k).unwrap_or("") == v
                    && (self.field || self.value(obj, k).is_some())
            }
            Req::Ne(k, v) => self.value(obj, k).unwrap_or("") != v,
            Req::Exists(k) => self.value(obj, k).is_some(),
            Req::Absent(k) => self.value(obj, k).is_none(),
            Req::In(k, vs) => self
                .value(obj, k)
                .is_some_and(|x| vs.iter().any(|v| v == x)),
            Req::NotIn(k, vs) => self.value(obj, k).is_none_or(|x| vs.iter().all(|v| v != x)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn labels_and_fields() {
        let o = json!({"metadata": {"name": "a", "labels": {"app": "web", "tier": "fe"}}, "status": {"phase": "Running"}});
        let yes = [
            "app=web",
            "app==web",
            "app!=db",
            "app",
            "!db",
            "app in (web, db)",
            "tier notin (be)",
            "app=web,tier",
            "",
        ];
        for s in yes {
            assert!(Selector::labels(s).unwrap().matches(&o), "{s}");
        }
        for s in [
            "app=db",
            "app!=web",
            "db",
            "!app",
            "app in (db)",
            "tier notin (fe,be)",
            "missing notin (x),app=db",
        ] {
            assert!(!Selector::labels(s).unwrap().matches(&o), "{s}");
        }
        let f =
            Selector::fields("status.phase!=Succeeded,status.phase!=Failed,status.phase!=Unknown")
                .unwrap();
        assert!(f.matches(&o));
        assert!(!f.matches(&json!({"status": {"phase": "Failed"}})));
        assert!(Selector::fields("metadata.name=a").unwrap().matches(&o));
        assert!(Selector::fields("bogus").is_err());
        assert!(Selector::labels("a b").is_err());
    }
}
