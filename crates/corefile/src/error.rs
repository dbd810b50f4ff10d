//! The one error type of the Corefile reader, formatted like CoreDNS's caddy fork.

use std::fmt;
use std::sync::Arc;

/// An error with its place. It exists so every Corefile problem can be shown exactly as
/// CoreDNS shows it: `Display` gives `FILE:LINE - MESSAGE`, where `message` already carries
/// CoreDNS's prefix (`Error during parsing: ...` or `Syntax error: ...`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// File the offending token came from (as given for the main file, absolute for imports).
    pub file: Arc<str>,
    /// Line of the offending token (0 when there is no token, like caddy).
    pub line: usize,
    /// The message including CoreDNS's prefix.
    pub message: String,
}

impl Error {
    /// Builds caddy's `Err`: `Error during parsing: MSG`.
    pub fn parsing(file: Arc<str>, line: usize, msg: &str) -> Self {
        Error {
            file,
            line,
            message: format!("Error during parsing: {msg}"),
        }
    }

    /// Builds caddy's `SyntaxErr`: `Syntax error: Unexpected token 'FOUND', expecting 'EXPECTED'`.
    pub fn syntax(file: Arc<str>, line: usize, found: &str, expected: &str) -> Self {
        Error {
            file,
            line,
            message: format!("Syntax error: Unexpected token '{found}', expecting '{expected}'"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{} - {}", self.file, self.line, self.message)
    }
}

impl std::error::Error for Error {}
