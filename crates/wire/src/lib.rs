//! DNS wire format for the hot path: parse a query, build a reply, make it
//! fit the client — all on borrowed slices and caller-owned buffers, with
//! the acceptance and EDNS rules of miekg/dns + CoreDNS.
//!
//! A typical request:
//!
//! ```text
//! match Query::parse(datagram) {
//!     Err(Reject::Drop) => {}
//!     Err(r) => { if reject_reply(datagram, r.rcode().unwrap(), &mut out) { send(&out) } }
//!     Ok(q) if q.bad_edns_version() => { badvers_reply(&q, &mut out); send(&out) }
//!     Ok(q) => {
//!         let mut w = MessageWriter::reply(&q, &mut out, rcode::NOERROR);
//!         w.push(Section::Answer, Owner::Question, rtype::A, class::IN, 60, &[192, 0, 2, 1])?;
//!         w.finish();
//!         finalize(&mut out, &q, q.max_reply_size(is_tcp));
//!         send(&out)
//!     }
//! }
//! ```
//!
//! Around that flow: [`Header`] and [`HeaderMut`] read and patch any
//! message's header in place, [`reply`] holds the checks a client makes of
//! a reply it received (forward, cache), and [`QueryBuilder`] builds a
//! query to send (health probes, tests).
//!
//! Self-contained: std only, no other module of the crate.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod be;
mod builder;
mod consts;
mod error_reply;
mod expand;
mod finalize;
mod header;
mod mnemonic;
mod name;
mod opt;
mod opt_edit;
mod query;
mod records;
pub mod reply;
mod writer;

#[cfg(test)]
mod tests;

pub use builder::QueryBuilder;
pub use consts::{
    HEADER_LEN, MAX_LABEL_LEN, MAX_MSG_SIZE, MAX_NAME_LEN, MIN_UDP_SIZE, QUESTION_OFFSET,
    QUESTION_POINTER, class, edns, flags, opcode, rcode, rtype,
};
pub use error_reply::{badvers_reply, reject_reply};
pub use expand::{copy_rdata, expand_name, expand_rdata, rdata_names, rdata_names_compressible};
pub use finalize::{finalize, fit};
pub use header::{Header, HeaderMut, Section, header_rcode};
pub use mnemonic::{
    ClassName, RcodeName, TypeName, class_from_str, class_name, rcode_from_str, rcode_name,
    type_from_str, type_name,
};
pub use name::{
    LabelLowercase, Labels, Lowercase, Name, NameError, Suffixes, name_spans, name_to_wire,
};
pub use opt::{EdnsOptions, Opt};
pub use opt_edit::set_option;
pub use query::{Query, Reject};
pub use records::{Record, RecordIter, WireError, records};
pub use writer::{MessageWriter, Owner, WriteError};
