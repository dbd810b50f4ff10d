//! Unit tests of the Corefile reader, one file per concern.

mod dispenser;
mod env;
mod fuzz;
mod imports;
mod lexer;
mod parser;
mod snippets;
mod support;
