//! Import chains: which files and snippets a token came through. They exist so an import
//! cycle ends with an error at once instead of after CoreDNS's 10 000 / 100 000 expansions.

use std::sync::Arc;

/// One link of an import chain: a file import or a snippet expansion, with the link of
/// the `import` that brought it in (`None` above the main file).
#[derive(Debug)]
pub struct Origin {
    /// The file or snippet this link stands for.
    pub kind: OriginKind,
    /// The link of the `import` that brought this one in.
    pub parent: Option<Arc<Origin>>,
}

impl Drop for Origin {
    /// Unlinks the chain iteratively: a long chain must not overflow the stack.
    fn drop(&mut self) {
        let mut next = self.parent.take();
        while let Some(link) = next {
            next = match Arc::try_unwrap(link) {
                Ok(mut origin) => origin.parent.take(),
                Err(_) => None,
            };
        }
    }
}

/// What an [`Origin`] link imported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OriginKind {
    /// A file, by its cleaned absolute path.
    File(Arc<str>),
    /// A snippet, by its name.
    Snippet(String),
}

impl OriginKind {
    fn describe(&self) -> String {
        match self {
            OriginKind::File(path) => path.to_string(),
            OriginKind::Snippet(name) => format!("({name})"),
        }
    }
}

/// Adds a link below `parent`.
pub fn child(parent: &Option<Arc<Origin>>, kind: OriginKind) -> Option<Arc<Origin>> {
    Some(Arc::new(Origin {
        kind,
        parent: parent.clone(),
    }))
}

/// If importing `kind` from a token with chain `ctx` re-enters a link already on the
/// chain, returns the message CoreDNS would end with (its cap error: the snippet cap when
/// the loop would exhaust it first, else the file cap) plus the cycle, e.g.
/// `maximum snippet import depth (10000) exceeded: import cycle (a) -> (b) -> (a)`.
pub fn cycle_error(
    ctx: &Option<Arc<Origin>>,
    kind: &OriginKind,
    snippet_cap: usize,
    file_cap: usize,
) -> Option<String> {
    let mut links = vec![kind.clone()];
    let mut link = ctx.as_ref();
    let mut found = false;
    while let Some(origin) = link {
        links.push(origin.kind.clone());
        if origin.kind == *kind {
            found = true;
            break;
        }
        link = origin.parent.as_ref();
    }
    if !found {
        return None;
    }
    links.reverse();
    let per_round = &links[1..];
    let snippets = per_round
        .iter()
        .filter(|k| matches!(k, OriginKind::Snippet(_)))
        .count();
    let files = per_round.len() - snippets;
    // Rounds to exhaust a cap are cap / per-round count; pick the cap reached first.
    let snippet_first = snippets > 0 && (files == 0 || snippet_cap * files <= file_cap * snippets);
    let head = if snippet_first {
        format!("maximum snippet import depth ({snippet_cap}) exceeded")
    } else {
        format!("maximum file import depth ({file_cap}) exceeded")
    };
    let path: Vec<String> = links.iter().map(OriginKind::describe).collect();
    Some(format!("{head}: import cycle {}", path.join(" -> ")))
}
