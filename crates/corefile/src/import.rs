//! Resolves `import PATTERN` to files and lexes them, as caddy's `doImport` /
//! `doSingleImport` do for anything that is not a snippet name.

use std::sync::Arc;

use super::lexer::{Token, tokenize};
use super::paths;

/// One imported file: its cleaned absolute path and its tokens (which carry that path).
pub struct ImportedFile {
    /// Absolute path, as imported tokens name it in errors.
    pub path: Arc<str>,
    /// The file's tokens.
    pub tokens: Vec<Token>,
}

/// Finds and lexes the files for `pattern`, imported from a token of `importing_file`.
/// Relative patterns are taken from that file's directory. `check` is called with each
/// file's absolute path before it is read (cycle detection). Errors are CoreDNS's
/// messages without the `Error during parsing: ` prefix.
pub fn import_files(
    pattern: &str,
    importing_file: &str,
    check: &dyn Fn(&str) -> Result<(), String>,
) -> Result<Vec<ImportedFile>, String> {
    let abs_file = paths::abs(importing_file)
        .map_err(|e| format!("Failed to get absolute path of file: {importing_file}: {e}"))?;
    let glob_pattern = if paths::is_abs(pattern) {
        pattern.to_string()
    } else {
        paths::join(&paths::dir(&abs_file), pattern)
    };
    if glob_pattern.matches('*').count() > 1
        || glob_pattern.matches('?').count() > 1
        || (glob_pattern.contains('[') && glob_pattern.contains(']'))
    {
        return Err(format!(
            "Glob pattern may only contain one wildcard (*), but has others: {glob_pattern}"
        ));
    }
    let matches = glob_matches(&glob_pattern)
        .map_err(|e| format!("Failed to use import pattern {pattern}: {e}"))?;
    if matches.is_empty() {
        if glob_pattern.contains(['*', '?', '[', ']']) {
            eprintln!("[WARNING] No files matching import glob pattern: {pattern}");
        } else {
            return Err(format!("File to import not found: {pattern}"));
        }
    }
    let mut files = Vec::with_capacity(matches.len());
    for path in matches {
        let abs = paths::abs(&path)
            .map_err(|e| format!("Failed to get absolute path of file: {path}: {e}"))?;
        check(&abs)?;
        let text = read_import(&path)?;
        let abs: Arc<str> = Arc::from(abs);
        files.push(ImportedFile {
            tokens: tokenize(&text, &abs),
            path: abs,
        });
    }
    Ok(files)
}

/// Go's `filepath.Glob` for the patterns that pass the wildcard check: a plain path is
/// returned if it exists (even as a directory or dangling link), a pattern lists matches
/// in sorted order. A lone `[` is Go's `syntax error in pattern`.
fn glob_matches(pattern: &str) -> Result<Vec<String>, String> {
    if !pattern.contains(['*', '?', '[']) {
        return Ok(match std::fs::symlink_metadata(pattern) {
            Ok(_) => vec![pattern.to_string()],
            Err(_) => Vec::new(),
        });
    }
    if pattern.contains('[') {
        return Err("syntax error in pattern".to_string());
    }
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: false,
    };
    let paths = glob::glob_with(pattern, options).map_err(|_| "syntax error in pattern")?;
    Ok(paths
        .filter_map(Result::ok)
        .map(|p| p.to_string_lossy().into_owned())
        .collect())
}

/// Reads one import target with caddy's error texts; a directory is an error.
fn read_import(path: &str) -> Result<String, String> {
    let file = std::fs::File::open(path).map_err(|e| {
        format!(
            "Could not import {path}: open {path}: {}",
            paths::go_io_text(&e)
        )
    })?;
    let meta = file.metadata().map_err(|e| {
        format!(
            "Could not import {path}: stat {path}: {}",
            paths::go_io_text(&e)
        )
    })?;
    if meta.is_dir() {
        return Err(format!("Could not import {path}: is a directory"));
    }
    let bytes = super::read_capped(file).map_err(|e| {
        if e.kind() == std::io::ErrorKind::FileTooLarge {
            format!("Could not read tokens while importing {path}: file {e}")
        } else {
            format!(
                "Could not read tokens while importing {path}: read {path}: {}",
                paths::go_io_text(&e)
            )
        }
    })?;
    Ok(super::decode(&bytes))
}
