//! A query name read as the Kubernetes DNS schema reads it (CoreDNS's `parseRequest`), right
//! to left below the zone: `[_port._proto. | endpoint.] service.namespace.(svc|pod).ZONE`.
//! The parts are slices of the packet: nothing is copied.

use ringdns_plugin::wire::Name;

/// `svc` or `pod`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    /// Services.
    Svc,
    /// Pods.
    Pod,
}

/// The parts of a name below a zone. Empty slices are parts the name does not have.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Parsed<'a> {
    /// `svc` or `pod`; `None` for the apex, `svc.ZONE` or `pod.ZONE` (NODATA).
    pub space: Option<Space>,
    /// The namespace label.
    pub namespace: &'a [u8],
    /// The service (or pod) label.
    pub service: &'a [u8],
    /// The endpoint label.
    pub endpoint: &'a [u8],
    /// The port name, underscore stripped.
    pub port: &'a [u8],
    /// The protocol, underscore stripped.
    pub protocol: &'a [u8],
}

/// The name is not of the schema (CoreDNS's `errInvalidRequest`): NXDOMAIN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Invalid;

/// Most labels below the zone that a name of the schema has.
const MAX_BASE: usize = 5;

/// Parses `name`, whose last `zone_labels` labels are the zone.
pub fn parse<'a>(name: &Name<'a>, zone_labels: usize) -> Result<Parsed<'a>, Invalid> {
    let total = name.label_count();
    let base_len = total.saturating_sub(zone_labels);
    if base_len > MAX_BASE {
        return Err(Invalid);
    }
    let mut segs: [&[u8]; MAX_BASE] = [&[]; MAX_BASE];
    for (i, l) in name.labels().take(base_len).enumerate() {
        segs[i] = l;
    }
    let segs = &segs[..base_len];
    let mut r = Parsed::default();
    let Some((&last, rest)) = segs.split_last() else {
        return Ok(r);
    };
    let space = if last.eq_ignore_ascii_case(b"svc") {
        Space::Svc
    } else if last.eq_ignore_ascii_case(b"pod") {
        Space::Pod
    } else {
        return Err(Invalid);
    };
    // `svc.ZONE` and `pod.ZONE` alone are NODATA, like the apex.
    if rest.is_empty() {
        return Ok(r);
    }
    r.space = Some(space);
    let Some((&ns, rest)) = rest.split_last() else {
        return Ok(r);
    };
    r.namespace = ns;
    let Some((&svc, rest)) = rest.split_last() else {
        return Ok(r);
    };
    r.service = svc;
    match rest {
        [] => {}
        [endpoint] => r.endpoint = endpoint,
        [port, protocol] => {
            r.port = strip_underscore(port);
            r.protocol = strip_underscore(protocol);
        }
        _ => return Err(Invalid),
    }
    Ok(r)
}

fn strip_underscore(s: &[u8]) -> &[u8] {
    s.strip_prefix(b"_").unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(name: &str) -> Result<(Option<Space>, String), Invalid> {
        let w = ringdns_testkit::wire_name(name);
        let n = Name::from_wire(&w).unwrap();
        let r = parse(&n, 2)?;
        let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        Ok((
            r.space,
            format!(
                "{}.{}.{}.{}.{}",
                s(r.port),
                s(r.protocol),
                s(r.endpoint),
                s(r.service),
                s(r.namespace)
            ),
        ))
    }

    /// CoreDNS's parse_test.go cases.
    #[test]
    fn names_parse_as_coredns_parses_them() {
        assert_eq!(
            p("_http._tcp.webs.mynamespace.svc.cluster.local."),
            Ok((Some(Space::Svc), "http.tcp..webs.mynamespace".into()))
        );
        assert_eq!(
            p("endpoint.webs.mynamespace.svc.cluster.local."),
            Ok((Some(Space::Svc), "..endpoint.webs.mynamespace".into()))
        );
        assert_eq!(
            p("webs.mynamespace.svc.cluster.local."),
            Ok((Some(Space::Svc), "...webs.mynamespace".into()))
        );
        assert_eq!(
            p("1-2-3-4.mynamespace.pod.cluster.local."),
            Ok((Some(Space::Pod), "...1-2-3-4.mynamespace".into()))
        );
        assert_eq!(p("svc.cluster.local."), Ok((None, "....".into())));
        assert_eq!(p("pod.cluster.local."), Ok((None, "....".into())));
        assert_eq!(p("cluster.local."), Ok((None, "....".into())));
        assert_eq!(
            p("mynamespace.svc.cluster.local.").unwrap().1,
            "....mynamespace"
        );
        // Invalid: too long, or not svc/pod.
        assert_eq!(p("too.long.for.what.I.am.svc.cluster.local."), Err(Invalid));
        assert_eq!(p("a.b.c.webs.mynamespace.svc.cluster.local."), Err(Invalid));
        assert_eq!(p("webs.mynamespace.bogus.cluster.local."), Err(Invalid));
        assert_eq!(p("dns-version.cluster.local."), Err(Invalid));
    }
}
