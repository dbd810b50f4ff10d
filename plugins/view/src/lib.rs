//! view: one of several server blocks for the same zone and port, chosen per query by
//! expressions, as CoreDNS's `plugin/view` (split DNS by client network, type, name or
//! metadata such as geoip's).
//!
//! The server asks a block with a view whether it takes a query ([`Handler::admits`])
//! before it picks the block: blocks of one zone and port are asked in Corefile order and
//! the first that takes the query serves it (one without a view takes every query). Here
//! the plugin's turn asks the rest of the block first, so that the metadata every plugin of
//! the block publishes there (geoip's) is in the request when the expressions run, then
//! runs them: all must give true. Serving, the plugin publishes `view/name` and hands on.

#![forbid(unsafe_code)]

mod expression;

use expr::Environment;
use expression::{Expression, QueryEnv};
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::{BlockSetup, CoreInfo, Handler, Plugin, Request, Screen, Screens, Status};
use std::sync::Arc;

/// The directive, for errors.
const NAME: &str = "view";

/// What setup parsed: the view's name and its expressions.
pub struct Config {
    name: String,
    expressions: Vec<Expression>,
    env: Environment<'static>,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("name", &self.name)
            .field("expressions", &self.expressions)
            .finish()
    }
}

impl Config {
    /// Whether every expression gives true for the query (none: every query passes).
    fn passes(&self, req: &Request<'_>) -> bool {
        let query = QueryEnv::new(req);
        self.expressions.iter().all(|e| e.passes(&self.env, &query))
    }
}

/// A core's view: the shared configuration.
pub struct View {
    config: Arc<Config>,
}

impl Plugin for View {
    const NAME: &'static str = NAME;
    type Config = Config;
    type Place = Screens;

    /// `view NAME { expr EXPRESSION... }`, once per block.
    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Config, Error> {
        let env = expression::environment();
        let mut seen = false;
        let mut name = String::new();
        let mut expressions = Vec::new();
        while d.next() {
            ringdns_plugin::once_per_block_of(d, NAME, &mut seen)?;
            let args = d.remaining_args();
            let [view] = args.as_slice() else {
                return Err(d.plugin_arg_err(NAME));
            };
            name = view.clone();
            while d.next_block() {
                match d.val() {
                    "expr" => {
                        let words = d.remaining_args();
                        if words.is_empty() {
                            return Err(d.plugin_arg_err(NAME));
                        }
                        let source = words.join(" ");
                        let e = Expression::compile(&source, &env)
                            .map_err(|m| d.plugin_err(NAME, m))?;
                        expressions.push(e);
                    }
                    other => {
                        return Err(d.plugin_err(NAME, format!("unknown property '{other}'")));
                    }
                }
            }
        }
        block.view = Some(name.clone());
        Ok(Config {
            name,
            expressions,
            env,
        })
    }
}

/// A screen, not a serving link: it answers nothing, so it keeps no state in the chain's
/// future; serving, it only publishes its name (the same on every pass).
impl Screen for View {
    fn build(config: &Arc<Config>, _core: &CoreInfo) -> Option<Self> {
        Some(View {
            config: config.clone(),
        })
    }

    fn screen(&self, req: &mut Request<'_>) -> Option<Status> {
        req.set_metadata("view/name", &self.config.name);
        None
    }

    fn admits<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> bool {
        next.admits(req) && self.config.passes(req)
    }
}

ringdns_plugin::export!(View);

#[cfg(test)]
mod tests;
