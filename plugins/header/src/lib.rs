//! header: sets or clears header flags of the queries the rest of the chain sees and of the
//! replies the client gets, as CoreDNS's header plugin (`plugin/header`).
//!
//! `query` rules edit a copy of the query that the rest of the chain is served
//! ([`ringdns_plugin::edit::Editor`]): only when they change a flag, so a query that already
//! has the flags goes on as it came. `response` rules edit the reply the rest wrote, in
//! place ([`Serve::amend`]).

#![forbid(unsafe_code)]

mod rules;

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::edit::Editor;
use ringdns_plugin::wire::HeaderMut;
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, Request, Serve, Serves, Status, client_write,
    warning,
};
use rules::Masks;
use std::future::Future;
use std::sync::Arc;

/// The directive, for errors and logs.
const NAME: &str = "header";

/// What setup parsed: the masks of the query rules and of the response rules.
#[derive(Debug, Default)]
pub struct Config {
    query: Masks,
    response: Masks,
}

/// The plugin's instance on one core: the rules and the core's copy of an edited query.
pub struct Header {
    config: Arc<Config>,
    editor: Editor,
}

impl Plugin for Header {
    const NAME: &'static str = NAME;
    type Config = Config;
    type Place = Serves;

    /// `header { query|response set|clear FLAGS... }`, CoreDNS's parse: the first `header`
    /// with rules is the block's; a line without a selector (`set ra`) is the older form,
    /// for replies.
    fn setup(d: &mut Dispenser<'_>, _block: &mut BlockSetup) -> Result<Config, Error> {
        let rule_err =
            |d: &Dispenser<'_>, e: String| d.plugin_err(NAME, format!("setting up rule: {e}"));
        while d.next() {
            let mut c = Config::default();
            let mut any = false;
            while d.next_block() {
                let selector = d.val().to_ascii_lowercase();
                let (response, action) = match selector.as_str() {
                    "set" | "clear" => {
                        warning!(
                            "plugin/{NAME}: The selector for header rule in line {} isn't explicit defined. \
                             Assume rule applies for selector 'response'. This syntax is deprecated \
                             (CoreDNS no longer accepts it).",
                            d.line()
                        );
                        (true, selector)
                    }
                    "query" | "response" => {
                        let action = if d.next_arg() {
                            d.val().to_string()
                        } else {
                            String::new()
                        };
                        (selector == "response", action)
                    }
                    _ => {
                        return Err(rule_err(
                            d,
                            format!("invalid selector={selector} should be query or response"),
                        ));
                    }
                };
                let flags = d.remaining_args();
                let masks = if response {
                    &mut c.response
                } else {
                    &mut c.query
                };
                masks.add(&action, &flags).map_err(|e| rule_err(d, e))?;
                any = true;
            }
            if any {
                return Ok(c);
            }
        }
        Err(d.plugin_arg_err(NAME))
    }
}

impl Serve for Header {
    fn build(config: &Arc<Config>, _core: &CoreInfo) -> Option<Self> {
        Some(Header {
            config: config.clone(),
            editor: Editor::default(),
        })
    }

    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        let edit = self.query_edit(req);
        self.editor.serve(NAME, req, next, edit)
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        let edit = self.query_edit(req);
        self.editor.serve_now(NAME, req, next, edit)
    }

    /// The response rules, on a reply the rest of the chain wrote (a reply the server writes
    /// itself bypasses them, as CoreDNS's writer).
    fn amend(&self, req: &mut Request<'_>, status: Status) -> Status {
        let r = &self.config.response;
        if !r.is_empty()
            && client_write(status.rcode)
            && let Some(mut h) = HeaderMut::of(req.reply)
        {
            let word = r.apply(h.get().flags());
            h.set_flags(word);
        }
        status
    }
}

impl Header {
    /// The edit the query rules make, `None` when they change nothing of this query.
    fn query_edit(&self, req: &Request<'_>) -> Option<impl FnOnce(&mut Vec<u8>) + use<>> {
        let word = req.query.flags();
        let edited = self.config.query.apply(word);
        (edited != word).then_some(move |p: &mut Vec<u8>| {
            p[2..4].copy_from_slice(&edited.to_be_bytes());
        })
    }
}

ringdns_plugin::export!(Header);

#[cfg(test)]
mod tests;
