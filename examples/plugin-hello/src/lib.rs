//! hello: answers TXT queries with a configured greeting and hands every other query to the
//! next plugin. An example of a plugin from outside ringdns's tree (docs/plugins.md).

#![forbid(unsafe_code)]

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::wire::rcode::NOERROR;
use ringdns_plugin::wire::rtype::TXT;
use ringdns_plugin::wire::{MessageWriter, Owner, Section};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, Request, Serve, Serves, Status,
    next_or_failure, next_or_failure_now,
};
use std::sync::Arc;

/// What setup parsed: the TXT record's RDATA, encoded once so that an answer only copies it.
pub struct Config {
    rdata: Vec<u8>,
    ttl: u32,
}

/// The plugin's instance on one core: the block's configuration, shared by every core.
pub struct Hello {
    config: Arc<Config>,
}

/// The greeting when the directive gives none.
const DEFAULT: &str = "hello, world";

impl Plugin for Hello {
    const NAME: &'static str = "hello";
    type Config = Config;
    type Place = Serves;

    /// `hello [TEXT...] [{ ttl SECONDS }]`: each TEXT is one character-string of the record.
    fn setup(d: &mut Dispenser<'_>, _block: &mut BlockSetup) -> Result<Config, Error> {
        let mut seen = false;
        let mut config = Config {
            rdata: Vec::new(),
            ttl: 3600,
        };
        while d.next() {
            ringdns_plugin::once_per_block_of(d, Self::NAME, &mut seen)?;
            let texts = d.remaining_args();
            let texts = if texts.is_empty() {
                vec![DEFAULT.to_string()]
            } else {
                texts
            };
            for text in &texts {
                let len = u8::try_from(text.len())
                    .map_err(|_| d.plugin_err(Self::NAME, "a TEXT is at most 255 bytes long"))?;
                config.rdata.push(len);
                config.rdata.extend_from_slice(text.as_bytes());
            }
            while d.next_block() {
                match d.val() {
                    "ttl" => {
                        if !d.next_arg() {
                            return Err(d.arg_err());
                        }
                        config.ttl = d
                            .val()
                            .parse()
                            .map_err(|_| d.plugin_err(Self::NAME, "ttl is a number of seconds"))?;
                        if d.next_arg() {
                            return Err(d.arg_err());
                        }
                    }
                    other => {
                        let message = format!("unknown property '{other}'");
                        return Err(d.plugin_err(Self::NAME, &message));
                    }
                }
            }
        }
        Ok(config)
    }
}

impl Serve for Hello {
    fn build(config: &Arc<Config>, _core: &CoreInfo) -> Option<Self> {
        Some(Hello {
            config: config.clone(),
        })
    }

    async fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Outcome {
        if req.query.qtype() == TXT {
            return Ok(self.answer(req));
        }
        next_or_failure(Self::NAME, next, req).await
    }

    /// A greeting never waits, so it is always answered here, without the chain's future.
    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        if req.query.qtype() == TXT {
            return Some(self.answer(req));
        }
        next_or_failure_now(Self::NAME, next, req)
    }
}

impl Hello {
    /// The reply: one TXT record owned by the query name, with the query's class.
    fn answer(&self, req: &mut Request<'_>) -> Status {
        let class = req.query.qclass();
        let mut w = MessageWriter::reply(&req.query, req.reply, NOERROR);
        w.set_aa(true);
        let pushed = w.push(
            Section::Answer,
            Owner::Question,
            TXT,
            class,
            self.config.ttl,
            &self.config.rdata,
        );
        if pushed.is_err() {
            return Status::rcode(ringdns_plugin::wire::rcode::SERVFAIL);
        }
        w.finish();
        req.finalize_reply();
        Status::written()
    }
}

ringdns_plugin::export!(Hello);

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> Result<Config, String> {
        ringdns_testkit::config::<Hello>(text).map(|(_, c)| c)
    }

    #[test]
    fn texts_become_character_strings() {
        let c = config(". {\n hello\n}\n").unwrap();
        assert_eq!(c.rdata, b"\x0chello, world");
        assert_eq!(c.ttl, 3600);
        let c = config(". {\n hello hi there {\n  ttl 60\n }\n}\n").unwrap();
        assert_eq!(c.rdata, b"\x02hi\x05there");
        assert_eq!(c.ttl, 60);
    }

    #[test]
    fn errors_name_the_plugin_and_the_line() {
        let long = "x".repeat(256);
        let e = config(&format!(". {{\n hello {long}\n}}\n")).err().unwrap();
        assert!(
            e.contains("plugin/hello: a TEXT is at most 255 bytes long"),
            "{e}"
        );
        assert!(e.contains("Corefile:2"), "{e}");
        let e = config(". {\n hello {\n  ttl soon\n }\n}\n").err().unwrap();
        assert!(e.contains("ttl is a number of seconds"), "{e}");
        let e = config(". {\n hello {\n  bogus\n }\n}\n").err().unwrap();
        assert!(e.contains("unknown property 'bogus'"), "{e}");
        let e = config(". {\n hello\n hello\n}\n").err().unwrap();
        assert!(e.contains("only be used once per Server Block"), "{e}");
    }
}
