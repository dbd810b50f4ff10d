//! The server as a plugin reaches it to resolve a name the way a client of the same
//! listener would: CoreDNS's `plugin/pkg/upstream`, which file uses for CNAME targets
//! outside its zone, so that another block of the server, a `hosts` block or `forward`
//! answers them.

use crate::wire::{MessageWriter, Owner, Section, expand_name, expand_rdata, records, rtype};
use std::future::Future;
use std::pin::Pin;

/// How deep lookups may nest (a lookup whose answer needs a lookup, …) before the server
/// refuses: CoreDNS's loop limit for `upstream`.
pub const MAX_DEPTH: u8 = 8;

/// What [`Lookup::lookup`] returns: the reply, or `None` when the query was dropped or
/// nested too deep. Boxed: a lookup is the uncommon path, and the box breaks the type
/// recursion of a chain that serves a query from within its own serving.
pub type LookupFuture<'a> = Pin<Box<dyn Future<Output = Option<Vec<u8>>> + 'a>>;

/// The server's side of a lookup; the runtime gives one to deferred passes
/// ([`crate::Request::lookup`]).
pub trait Lookup {
    /// Serves `query` (a whole DNS message) through the blocks of the listener the current
    /// query came in on, as a query from the same client, and returns the reply bytes.
    fn lookup<'a>(&'a self, query: &'a [u8]) -> LookupFuture<'a>;
}

/// Copies the answer section of a lookup's `reply` into `w`, names uncompressed (the
/// reply's pointers mean nothing in `w`); returns how many. What file's CNAME chains and
/// template's CNAMEs append of their targets.
pub fn append_answers(reply: &[u8], w: &mut MessageWriter<'_>) -> usize {
    append_answers_to(reply, w, Section::Answer)
}

/// [`append_answers`] into section `to` of `w`: k8s_external's SRV glue is the answers of
/// lookups of its targets' addresses.
pub fn append_answers_to(reply: &[u8], w: &mut MessageWriter<'_>, to: Section) -> usize {
    let Ok(it) = records(reply) else { return 0 };
    let (mut owner, mut rdata) = (Vec::with_capacity(256), Vec::with_capacity(512));
    let mut n = 0;
    for r in it {
        let Ok(r) = r else { break };
        if r.section != Section::Answer || r.rtype == rtype::OPT {
            continue;
        }
        owner.clear();
        rdata.clear();
        if expand_name(reply, r.owner.start, reply.len(), &mut owner).is_err()
            || expand_rdata(reply, &r, &mut rdata).is_err()
        {
            break;
        }
        let ttl = r.ttl(reply);
        if w.push(to, Owner::Wire(&owner), r.rtype, r.class, ttl, &rdata)
            .is_ok()
        {
            n += 1;
        }
    }
    n
}
