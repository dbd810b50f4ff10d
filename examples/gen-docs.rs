//! Writes ringdns's manual page and shell completions into a folder (default
//! `target/docs`), for `make install`: `cargo run --example gen-docs -- DIR`.

use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/docs"));
    ringdns::cli::write_docs(&dir)?;
    println!("{}", dir.display());
    Ok(())
}
