//! What a parsed Corefile is: server blocks of directives, plus ringdns's global block.

use std::collections::HashMap;

use super::lexer::Token;

/// A directive with the tokens of all its occurrences in one block, so a plugin's setup
/// runs once and walks every occurrence (CoreDNS's `c.Next()` loop). Each occurrence
/// starts with the directive-name token and holds its arguments and any nested `{ }`
/// block tokens, braces included, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directive {
    /// Directive name (environment references substituted).
    pub name: String,
    /// All occurrences' tokens, concatenated.
    pub tokens: Vec<Token>,
}

/// One server block: the zones/addresses it serves and its directives. Keys are one token
/// each, trailing commas removed and environment references substituted; directives are
/// in order of first appearance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerBlock {
    /// The block's keys (addresses).
    pub keys: Vec<Token>,
    /// The block's directives.
    pub directives: Vec<Directive>,
}

/// A whole parsed Corefile: the optional global block (ringdns extension: a key-less
/// `{ ... }` allowed only as the very first thing in the file, its directives not checked
/// against plugin.cfg) and the server blocks. Snippet definitions are not included.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Corefile {
    /// Directives of the global block (empty when there is none).
    pub global: Vec<Directive>,
    /// The server blocks, in file order.
    pub blocks: Vec<ServerBlock>,
}

/// Collects directive tokens by name while keeping first-appearance order.
#[derive(Default)]
pub struct DirectiveList {
    list: Vec<Directive>,
    index: HashMap<String, usize>,
}

impl DirectiveList {
    /// Appends `token` to directive `name`, creating the directive on first use.
    pub fn push(&mut self, name: &str, token: Token) {
        let at = match self.index.get(name) {
            Some(&at) => at,
            None => {
                self.list.push(Directive {
                    name: name.to_string(),
                    tokens: Vec::new(),
                });
                self.index.insert(name.to_string(), self.list.len() - 1);
                self.list.len() - 1
            }
        };
        self.list[at].tokens.push(token);
    }

    /// The directives in order of first appearance.
    pub fn into_vec(self) -> Vec<Directive> {
        self.list
    }
}
