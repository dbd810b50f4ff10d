//! Reading a file a Corefile names, whole but within a limit, with Go's error words: the
//! messages about it read as CoreDNS's (`open PATH: no such file or directory`), and a
//! file such as `/dev/zero` cannot be read until memory runs out.

use crate::corefile::go_io_text;
use std::io::Read;
use std::path::Path;

/// Why a file could not be read, as Go words it: `open PATH: no such file or directory`.
#[derive(Debug)]
pub struct ReadError {
    /// The Go-style text (`open …: …` or `read …: …`).
    pub text: String,
    /// The file does not exist (Go's `os.ErrNotExist`).
    pub not_found: bool,
}

/// Reads the whole file at `path`, of at most `max` bytes (more is an error).
pub fn read_limited(path: &Path, max: u64) -> Result<Vec<u8>, ReadError> {
    let shown = path.display();
    let mut f = std::fs::File::open(path).map_err(|e| ReadError {
        text: format!("open {shown}: {}", go_io_text(&e)),
        not_found: e.kind() == std::io::ErrorKind::NotFound,
    })?;
    let mut buf = Vec::new();
    f.by_ref()
        .take(max + 1)
        .read_to_end(&mut buf)
        .map_err(|e| ReadError {
            text: format!("read {shown}: {}", go_io_text(&e)),
            not_found: false,
        })?;
    if buf.len() as u64 > max {
        return Err(ReadError {
            text: format!("read {shown}: file larger than {max} bytes"),
            not_found: false,
        });
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_read_like_go() {
        let e = read_limited(Path::new("/nonexistent/x"), 10).unwrap_err();
        assert_eq!(e.text, "open /nonexistent/x: no such file or directory");
        assert!(e.not_found);
        let e = read_limited(Path::new(""), 10).unwrap_err();
        assert_eq!(e.text, "open : no such file or directory");
        let e = read_limited(Path::new("/dev/zero"), 10).unwrap_err();
        assert_eq!(e.text, "read /dev/zero: file larger than 10 bytes");
        assert!(!e.not_found);
        let e = read_limited(Path::new("/"), 10).unwrap_err();
        assert_eq!(e.text, "read /: is a directory");
    }
}
