//! rewrite: rewrites queries before the rest of the chain sees them and their replies on
//! the way back, as CoreDNS's `plugin/rewrite`: the query's name (exact, prefix, suffix,
//! substring, regex), type, class and EDNS0 options; the reply's names and values, TTLs,
//! rcode and CNAME targets. The client always gets back its own question.
//!
//! Every `rewrite` line of a block is one rule, tried in order; a rule that matches ends the
//! trying unless it says `continue`. A query no rule matches goes on as it came, at no
//! cost: its name is matched as text on the stack. A matched query is served to the rest
//! as an edited copy ([`Editor`]) and its reply written anew for the client
//! ([`reply::rewrite`]); that path allocates.

#![forbid(unsafe_code)]

mod pattern;
mod plan;
mod reply;
mod rules;

use plan::{Plan, Planned};
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::edit::Editor;
use ringdns_plugin::name_text::NameText;
use ringdns_plugin::wire::rcode::SERVFAIL;
use ringdns_plugin::wire::{MessageWriter, Name, QueryBuilder};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, PluginError, Request, Serve, ServeFuture,
    Serves, Status, client_write, error, next_or_failure, next_or_failure_now,
};
use rules::Rule;
use std::cell::RefCell;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

/// The directive, for errors and logs.
const NAME: &str = "rewrite";

/// What setup parsed: the block's rules, in order.
#[derive(Debug)]
pub struct Config {
    rules: Vec<Rule>,
}

/// The plugin's instance on one core: the rules, the core's copy of an edited query and
/// its buffer for rewritten replies.
pub struct Rewrite {
    config: Arc<Config>,
    editor: Editor,
    scratch: RefCell<Vec<u8>>,
    /// The query name's text the rules match, kept per core.
    text: RefCell<NameText>,
}

impl Plugin for Rewrite {
    const NAME: &'static str = NAME;
    type Config = Config;
    type Place = Serves;

    /// Every `rewrite` of the block, a rule each: its arguments, or with fewer than two,
    /// the tokens of its block appended (CoreDNS's `rewriteParse`).
    fn setup(d: &mut Dispenser<'_>, _block: &mut BlockSetup) -> Result<Config, Error> {
        let mut rules = Vec::new();
        while d.next() {
            let mut args = d.remaining_args();
            if args.len() < 2 {
                while d.next_block() {
                    args.push(d.val().to_string());
                }
            }
            rules.push(rules::parse(&args).map_err(|e| d.plugin_err(NAME, e))?);
        }
        Ok(Config { rules })
    }
}

impl Serve for Rewrite {
    fn build(config: &Arc<Config>, _core: &CoreInfo) -> Option<Self> {
        Some(Rewrite {
            config: config.clone(),
            editor: Editor::default(),
            scratch: RefCell::new(Vec::with_capacity(4096)),
            text: RefCell::new(NameText::new()),
        })
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        let mut plan = match self.plan(req) {
            Planned::Untouched => return next_or_failure_now(NAME, next, req),
            Planned::Invalid(why) => return Some(invalid(why)),
            Planned::Plan(p) => p,
        };
        if plan.lookup {
            return None;
        }
        let status =
            self.editor
                .serve_now(NAME, req, next, plan.packet.take().map(replace_with))?;
        Some(self.respond(req, &plan, status, None))
    }

    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        let mut plan = match self.plan(req) {
            Planned::Untouched => {
                return ServeFuture::Next {
                    fut: next_or_failure(NAME, next, req),
                };
            }
            Planned::Invalid(why) => return ServeFuture::ready(Ok(invalid(why))),
            Planned::Plan(p) => p,
        };
        if !req.can_wait() {
            if plan.lookup {
                return ServeFuture::ready(req.defer());
            }
            // The editor serves the inline pass on the spot: its future is ready at once.
            let edit = plan.packet.take().map(replace_with);
            let polled = pin!(self.editor.serve(NAME, req, next, edit))
                .poll(&mut Context::from_waker(Waker::noop()));
            let outcome = match polled {
                Poll::Ready(o) => o,
                Poll::Pending => {
                    req.clear_reply();
                    req.defer()
                }
            };
            return ServeFuture::ready(outcome.map(|s| self.respond(req, &plan, s, None)));
        }
        ServeFuture::Own {
            fut: Box::pin(async move {
                let edit = plan.packet.take().map(replace_with);
                let Ok(status) = self.editor.serve(NAME, req, next, edit).await else {
                    return Status::deferred_on_wait(NAME);
                };
                let follow = if plan.lookup && client_write(status.rcode) {
                    follow_cname(req, &plan).await
                } else {
                    None
                };
                self.respond(req, &plan, status, follow.as_ref())
            }),
        }
    }
}

/// The edit that makes the client's packet the plan's query.
fn replace_with(packet: Vec<u8>) -> impl FnOnce(&mut Vec<u8>) {
    move |buf: &mut Vec<u8>| {
        buf.clear();
        buf.extend_from_slice(&packet);
    }
}

/// CoreDNS's answer to a rule that made the name invalid: SERVFAIL, and the error.
fn invalid(why: String) -> Status {
    Status::error(SERVFAIL, PluginError::new(NAME, why))
}

/// A CNAME rule's lookup: the CNAME of the reply it rewrites, and the server's reply for
/// the new target (CoreDNS's `upstream.Lookup` of it, for the query's type).
async fn follow_cname(req: &Request<'_>, plan: &Plan<'_>) -> Option<reply::CnameFollow> {
    let (index, target) = reply::cname_to_follow(req.reply, plan)?;
    let looked_up = match (req.lookup(), Name::from_wire(&target)) {
        (Some(via), Ok(name)) => {
            let query = QueryBuilder::new(name, plan.qtype)
                .id(req.query.id())
                .rd(true)
                .build();
            via.lookup(&query).await
        }
        _ => None,
    };
    if looked_up.is_none() {
        error!("plugin/{NAME}: upstream lookup failed: no reply for the rewritten CNAME target");
        return None;
    }
    Some(reply::CnameFollow {
        index,
        target,
        looked_up,
    })
}

impl Rewrite {
    /// The rules run over the query, in the core's name buffer (planning calls nothing that
    /// could plan again, so the buffer is never borrowed twice).
    fn plan(&self, req: &Request<'_>) -> Planned<'_> {
        plan::plan(&self.config.rules, req, &mut self.text.borrow_mut())
    }

    /// The client's reply once the rest served the plan's query: a reply the server would
    /// write itself (SERVFAIL, REFUSED…) is written here when an rcode rule changes it, as
    /// CoreDNS's reverter writes it; a written one is rewritten for the client.
    fn respond(
        &self,
        req: &mut Request<'_>,
        plan: &Plan<'_>,
        status: Status,
        cname: Option<&reply::CnameFollow>,
    ) -> Status {
        if !client_write(status.rcode) {
            let Some(new) = plan.map_rcode(status.rcode) else {
                return status;
            };
            req.clear_reply();
            MessageWriter::reply(&req.query, req.reply, new).finish();
            req.finalize_reply();
            return Status {
                rcode: new,
                error: status.error,
            };
        }
        if req.reply.is_empty() || !plan.rewrites_reply() {
            return status;
        }
        let Ok(mut out) = self.scratch.try_borrow_mut() else {
            return status;
        };
        if reply::rewrite(req.reply, &req.query, plan, cname, &mut out) {
            req.reply.clear();
            req.reply.extend_from_slice(&out);
            req.finalize_reply();
        }
        Status {
            rcode: plan.map_rcode(status.rcode).unwrap_or(status.rcode),
            error: status.error,
        }
    }
}

ringdns_plugin::export!(Rewrite);

#[cfg(test)]
mod tests;
