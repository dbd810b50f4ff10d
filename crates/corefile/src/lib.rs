//! Corefile reader: CoreDNS's configuration format, read exactly as CoreDNS's caddy fork
//! (`caddyfile/lexer.go`, `parse.go`, `dispenser.go`) reads it, with CoreDNS's error texts.
//!
//! [`parse`] turns a Corefile into server blocks of directives (snippets and `import`
//! expanded, `{$VAR}` substituted); plugin setup code then walks a directive's tokens with
//! a [`Dispenser`]. ringdns extension: a key-less `{ ... }` block as the very first thing
//! in the file is the global block ([`Corefile::global`]).

#![forbid(unsafe_code)]

mod dispenser;
mod env;
mod error;
mod expand;
mod import;
mod lexer;
mod model;
mod options;
mod origin;
mod parser;
mod paths;
mod stream;

#[cfg(test)]
mod tests;

pub use dispenser::Dispenser;
pub use error::Error;
pub use lexer::{Token, tokenize};
pub use model::{Corefile, Directive, ServerBlock};
pub use options::{Limits, ParseOptions};
pub use paths::go_io_text;

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

/// Largest Corefile, and largest imported file, that is read: guards against
/// `-conf /dev/zero`, `import /dev/zero` and the like, which would otherwise be read until
/// memory runs out. 64 MiB is far beyond any real Corefile.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// Reads all of `r`, but not more than [`MAX_FILE_BYTES`]: more is an error of kind
/// `FileTooLarge` whose text names the limit, so that no caller reads without one.
pub fn read_capped(r: impl Read) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    r.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!(
                "larger than {MAX_FILE_BYTES} bytes ({} MiB), the limit for a Corefile and for each file it imports",
                MAX_FILE_BYTES >> 20
            ),
        ));
    }
    Ok(bytes)
}

/// Parses a Corefile. `file` is the name shown in errors (as given: "Corefile",
/// "/etc/coredns/Corefile", "stdin"); relative imports resolve against its directory
/// (the current directory for a bare name such as "stdin"). `known_directive` says
/// whether a name is in plugin.cfg; other names fail with `Unknown directive 'X'`.
/// Environment variables come from the process; caps are CoreDNS's.
pub fn parse(
    file: &str,
    input: &str,
    known_directive: &dyn Fn(&str) -> bool,
) -> Result<Corefile, Error> {
    parse_with(file, input, known_directive, &ParseOptions::default())
}

/// [`parse`] with explicit options (import caps, environment lookup), so callers and
/// tests need not change the process environment.
pub fn parse_with(
    file: &str,
    input: &str,
    known_directive: &dyn Fn(&str) -> bool,
    options: &ParseOptions<'_>,
) -> Result<Corefile, Error> {
    parser::parse_tokens(file, input, known_directive, options)
}

/// A Corefile's bytes as the text the lexer reads, decoded as CoreDNS's lexer decodes them
/// (`bufio.Reader.ReadRune`): UTF-8, where each byte that does not start a valid sequence
/// becomes one U+FFFD. So a Latin-1 `é` in a comment is harmless and one in an argument
/// (a log format, a regex) is U+FFFD there, in ringdns as in CoreDNS, instead of a file
/// that cannot be read at all. (Rust's `from_utf8_lossy` would merge a broken multi-byte
/// sequence into one U+FFFD; Go makes one per byte.)
pub fn decode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                return out;
            }
            Err(e) => {
                let (valid, bad) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                out.push(char::REPLACEMENT_CHARACTER);
                rest = &bad[1..];
            }
        }
    }
}

/// Reads a Corefile from disk and parses it; the path as given is the name in errors.
/// A file that cannot be read is an error at line 0.
pub fn parse_file(path: &Path, known_directive: &dyn Fn(&str) -> bool) -> Result<Corefile, Error> {
    let name = path.to_string_lossy();
    let bytes = std::fs::read(path).map_err(|e| {
        Error::parsing(
            Arc::from(name.as_ref()),
            0,
            &format!("Could not read file {name}: {}", paths::go_io_text(&e)),
        )
    })?;
    parse(&name, &decode(&bytes), known_directive)
}
