//! Knobs of a parse: expansion caps and the environment used for `{$VAR}`.

use super::env::process_env;

/// Per-parse caps on imports, as in CoreDNS's caddy fork: 10 000 snippet expansions and
/// 100 000 file imports (a glob import counts once). They stop runaway expansion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most `import SNIPPET` expansions in one parse.
    pub snippet_expansions: usize,
    /// Most `import FILE-OR-GLOB` statements executed in one parse.
    pub file_imports: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            snippet_expansions: 10_000,
            file_imports: 100_000,
        }
    }
}

/// Options for [`super::parse_with`]; they exist so callers and tests can lower the caps
/// or supply environment variables without touching the process environment.
pub struct ParseOptions<'a> {
    /// Import caps.
    pub limits: Limits,
    /// Looks up an environment variable (`None` = unset, which substitutes as "").
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

impl Default for ParseOptions<'static> {
    fn default() -> Self {
        ParseOptions {
            limits: Limits::default(),
            env: &process_env,
        }
    }
}
