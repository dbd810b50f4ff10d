//! `{$VAR}` / `{%VAR%}` substitution, as caddy's `replaceEnvVars`.

/// Longest text a substitution may build; Go would loop forever on a variable whose value
/// contains its own placeholder, ringdns stops here instead.
const MAX_LEN: usize = 1 << 20;
/// Most replacement rounds in one pass (same reason as [`MAX_LEN`]).
const MAX_ROUNDS: usize = 10_000;

/// Reads a variable from the process environment; unset, empty-named or malformed names
/// give the empty string, as Go's `os.Getenv` does.
pub fn process_env(name: &str) -> Option<String> {
    if name.is_empty() || name.contains('=') || name.contains('\0') {
        return None;
    }
    std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
}

/// Replaces environment references anywhere in a token. It exists because CoreDNS does
/// this for keys, directive names and arguments: `{%VAR%}` first, then `{$VAR}`; an unset
/// variable becomes ""; the result stays one token.
pub fn replace_env_vars(s: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    let s = replace_refs(s, "{%", "%}", lookup);
    replace_refs(&s, "{$", "}", lookup)
}

/// caddy's `replaceEnvReferences`, step for step: find the first `start`, the first `end`
/// at or after it, replace every copy of that reference, then search again from the top.
/// An empty name (`{$}`) stops the pass, an unterminated reference too.
fn replace_refs(
    s: &str,
    start: &str,
    end: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> String {
    let mut s = s.to_string();
    let mut rounds = 0;
    while let Some(index) = s.find(start) {
        let Some(rel) = s[index..].find(end) else {
            break;
        };
        let end_index = index + rel;
        if end_index <= index + start.len() {
            break;
        }
        let reference = s[index..end_index + end.len()].to_string();
        let value = lookup(&s[index + start.len()..end_index]).unwrap_or_default();
        let next = s.replace(&reference, &value);
        rounds += 1;
        if next.len() > MAX_LEN || rounds > MAX_ROUNDS {
            break;
        }
        s = next;
    }
    s
}
