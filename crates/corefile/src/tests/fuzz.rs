//! Garbage in, error or result out: never a panic, never a hang.

use super::support::TempDir;
use crate::{Dispenser, ParseOptions, parse_with};

/// Small deterministic xorshift generator (no extra crates).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap_or(0)
    }
}

/// Pieces that exercise the grammar; no `/` so imports stay inside the temp dir.
const PIECES: &[&str] = &[
    "{",
    "}",
    "\"",
    "\\",
    "#",
    "\n",
    " ",
    "\t",
    "\r",
    "import",
    "import ",
    "(",
    ")",
    "(s)",
    "s",
    ",",
    "{$",
    "{%",
    "%}",
    "$",
    "%",
    "*",
    "?",
    "[",
    "]",
    "log",
    "errors",
    "a.org",
    ".",
    "..",
    "x",
    "\u{feff}",
    "é",
    "\u{a0}",
    "import s\n",
    "(s) {\n",
    "import *\n",
    "import f\n",
    "import a.conf\n",
    "{$HOME}",
    "{%V%}",
    "\"\"",
];

fn garbage(rng: &mut Rng) -> String {
    if rng.below(4) == 0 {
        let bytes: Vec<u8> = (0..rng.below(200))
            .map(|_| (rng.next() & 0xff) as u8)
            .collect();
        return String::from_utf8_lossy(&bytes).into_owned();
    }
    (0..rng.below(60))
        .map(|_| PIECES[rng.below(PIECES.len())])
        .collect()
}

#[test]
fn random_inputs_never_panic() {
    let dir = TempDir::new("fuzz");
    dir.write("f", "log\nimport a.conf\n");
    dir.write("a.conf", "(s) {\n import f\n}\nimport s\n");
    dir.write("g.conf", "{ }\n}\n{");
    let main = dir.join("Corefile");
    let env = |name: &str| (name == "V").then(|| "import".to_string());
    let options = ParseOptions {
        env: &env,
        ..ParseOptions::default()
    };
    let known = |name: &str| name.len() % 2 == 1;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut ok, mut failed) = (0, 0);
    for _ in 0..600 {
        let input = garbage(&mut rng);
        match parse_with(&main, &input, &known, &options) {
            Ok(corefile) => {
                ok += 1;
                for dirs in corefile.blocks.iter().map(|b| &b.directives) {
                    for directive in dirs {
                        drain(&directive.tokens);
                    }
                }
            }
            Err(err) => {
                failed += 1;
                assert!(!err.to_string().is_empty());
            }
        }
    }
    assert!(ok > 0 && failed > 0, "ok {ok}, failed {failed}");
}

/// Walks tokens with every Dispenser method; must terminate.
fn drain(tokens: &[crate::Token]) {
    let mut d = Dispenser::new(tokens);
    let mut budget = tokens.len() * 4 + 16;
    while d.next() && budget > 0 {
        let _ = d.remaining_args();
        while d.next_block() && budget > 0 {
            budget -= 1;
            let _ = (d.next_arg(), d.next_line(), d.arg_err(), d.syntax_err("x"));
        }
        budget = budget.saturating_sub(1);
    }
}
