//! Go `path/filepath` helpers (Unix rules) so import paths and messages match CoreDNS.

/// Go's `filepath.Clean`: drops `.`, empty parts and resolvable `..`.
pub fn clean(path: &str) -> String {
    if path.is_empty() {
        return ".".to_string();
    }
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|p| *p != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

/// Go's `filepath.IsAbs` on Unix.
pub fn is_abs(path: &str) -> bool {
    path.starts_with('/')
}

/// Go's `filepath.Join` of two parts.
pub fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => String::new(),
        (true, false) => clean(b),
        (false, true) => clean(a),
        (false, false) => clean(&format!("{a}/{b}")),
    }
}

/// Go's `filepath.Dir`: everything before the last `/`, cleaned.
pub fn dir(path: &str) -> String {
    match path.rfind('/') {
        Some(i) => clean(&path[..=i]),
        None => ".".to_string(),
    }
}

/// Go's `filepath.Abs`: absolute paths are cleaned, relative ones joined to the
/// current directory. Errors carry the reason as text.
pub fn abs(path: &str) -> Result<String, String> {
    if is_abs(path) {
        return Ok(clean(path));
    }
    let cwd = std::env::current_dir().map_err(|e| go_io_text(&e))?;
    Ok(join(&cwd.to_string_lossy(), path))
}

/// An I/O error worded like Go's (`no such file or directory`), without Rust's `(os error N)`.
pub fn go_io_text(err: &std::io::Error) -> String {
    let text = err.to_string();
    let text = match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => text,
    }
}
