//! CoreDNS's reply classes for `log { class … }`: its `response.Typify` then `Classify`,
//! read from the reply's wire bytes.

use ringdns_plugin::Request;
use ringdns_plugin::wire::rcode::{NOERROR, NXDOMAIN};
use ringdns_plugin::wire::rtype::SOA;
use ringdns_plugin::wire::{self, Section};

/// The classes a `class` line can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Every reply.
    All,
    /// NOERROR with an answer, and delegations.
    Success,
    /// NXDOMAIN and NODATA.
    Denial,
    /// Everything else (SERVFAIL, REFUSED, FORMERR, NOTIMP, …).
    Error,
}

impl Class {
    /// `all`, `success`, `denial` or `error`.
    pub fn from_name(s: &str) -> Option<Class> {
        match s {
            "all" => Some(Class::All),
            "success" => Some(Class::Success),
            "denial" => Some(Class::Denial),
            "error" => Some(Class::Error),
            _ => None,
        }
    }
}

/// Classifies the reply in `req.reply` whose full rcode is `rcode`.
pub fn classify(req: &Request<'_>, rcode: u16) -> Class {
    let (noerror, nxdomain) = (u16::from(NOERROR), u16::from(NXDOMAIN));
    let qtype = req.query.qtype();
    let (mut answers, mut matching, mut soa) = (0, false, false);
    if let Ok(records) = wire::records(req.reply) {
        for rr in records.flatten() {
            match rr.section {
                Section::Answer => {
                    answers += 1;
                    matching |= rr.rtype == qtype;
                }
                Section::Authority if rr.rtype == SOA => soa = true,
                _ => {}
            }
        }
    }
    if rcode == noerror && answers > 0 && matching {
        Class::Success
    } else if (soa && rcode == noerror)
        || (answers > 0 && !matching && rcode == noerror)
        || (soa && rcode == nxdomain)
    {
        Class::Denial
    } else if rcode == noerror {
        // Delegations and plain NOERROR.
        Class::Success
    } else {
        Class::Error
    }
}
