//! proxyproto: read the PROXY protocol header (v1 and v2 over TCP, v2 over UDP) that a load
//! balancer puts before a client's bytes, so that every plugin sees the client's address.
//! Configuration only: the setup records the settings in the block setup
//! ([`BlockSetup::proxy_protocol`]); the server reads the headers on the block's listeners.

#![forbid(unsafe_code)]

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::duration;
use ringdns_plugin::quote::go_quote;
use ringdns_plugin::reverse::Cidr;
use ringdns_plugin::{BlockSetup, ConfigOnly, Plugin, ProxyPolicy, ProxyProtocol};
use std::time::Duration;

/// Configuration-only: records the PROXY protocol settings in the block setup.
pub struct ProxyProto;

const NAME: &str = "proxyproto";

impl Plugin for ProxyProto {
    const NAME: &'static str = NAME;
    type Config = ();
    type Place = ConfigOnly;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<(), Error> {
        let mut p = ProxyProtocol {
            allow: Vec::new(),
            default: None,
            session_ttl: Duration::ZERO,
            max_sessions: None,
        };
        // Every occurrence in the block adds to one setting, as CoreDNS's `for c.Next()`.
        while d.next() {
            if !d.remaining_args().is_empty() {
                return Err(d.plugin_arg_err(NAME));
            }
            while d.next_block() {
                match d.val() {
                    "allow" => {
                        for v in d.remaining_args() {
                            let Some(net) = Cidr::parse(&v) else {
                                return Err(d.plugin_err(
                                    NAME,
                                    format_args!("{v}: invalid CIDR address: {v}"),
                                ));
                            };
                            p.allow.push(net);
                        }
                    }
                    "default" => {
                        let v = d.remaining_args();
                        let [v] = v.as_slice() else {
                            return Err(d.plugin_arg_err(NAME));
                        };
                        p.default = Some(match v.to_ascii_lowercase().as_str() {
                            "use" => ProxyPolicy::Use,
                            "ignore" => ProxyPolicy::Ignore,
                            "reject" => ProxyPolicy::Reject,
                            "skip" => ProxyPolicy::Skip,
                            _ => return Err(d.plugin_arg_err(NAME)),
                        });
                    }
                    "udp_session_tracking" => {
                        let v = d.remaining_args();
                        if v.is_empty() || v.len() > 2 {
                            return Err(d.plugin_arg_err(NAME));
                        }
                        let (negative, ttl) = duration::parse_signed(&v[0]).map_err(|e| {
                            d.plugin_err(
                                NAME,
                                format_args!(
                                    "udp_session_tracking: invalid duration {}: {e}",
                                    go_quote(&v[0])
                                ),
                            )
                        })?;
                        // A negative duration is valid and, as zero, tracks nothing.
                        p.session_ttl = if negative { Duration::ZERO } else { ttl };
                        if let Some(max) = v.get(1) {
                            match duration::go_atoi(max) {
                                Ok(n) if n > 0 => {
                                    p.max_sessions = Some(usize::try_from(n).unwrap_or(usize::MAX))
                                }
                                _ => {
                                    return Err(d.plugin_err(
                                        NAME,
                                        format_args!(
                                            "udp_session_tracking: invalid max sessions {}: must be a positive integer",
                                            go_quote(max)
                                        ),
                                    ));
                                }
                            }
                        }
                    }
                    other => return Err(d.err(&format!("unknown option '{other}'"))),
                }
            }
        }
        block.proxy_protocol = Some(p);
        Ok(())
    }
}

ringdns_plugin::export!(ProxyProto);

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    fn setup(text: &str) -> Result<ProxyProtocol, String> {
        let block = ringdns_testkit::setup::<ProxyProto>(&format!(". {{\n{text}\n}}\n"))?;
        Ok(block.proxy_protocol.expect("set"))
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn bare_uses_every_peers_header() {
        let p = setup("proxyproto").unwrap();
        assert_eq!(p.allow, vec![]);
        assert_eq!(p.default, None);
        assert!(!p.tracks_sessions());
        assert_eq!(p.policy(ip("192.0.2.1")), ProxyPolicy::Use);
        assert_eq!(p.policy(ip("::1")), ProxyPolicy::Use);
    }

    #[test]
    fn allow_uses_its_networks_and_ignores_the_rest_by_default() {
        let p = setup("proxyproto {\nallow 127.0.0.1/8 ::1/128\n}").unwrap();
        assert_eq!(p.allow.len(), 2);
        assert_eq!(p.policy(ip("127.9.9.9")), ProxyPolicy::Use);
        assert_eq!(p.policy(ip("::1")), ProxyPolicy::Use);
        assert_eq!(p.policy(ip("192.0.2.1")), ProxyPolicy::Ignore);
        let p = setup("proxyproto {\nallow 10.0.0.0/8\ndefault SKIP\n}").unwrap();
        assert_eq!(p.policy(ip("10.1.2.3")), ProxyPolicy::Use);
        assert_eq!(p.policy(ip("127.0.0.1")), ProxyPolicy::Skip);
        // `allow` with no network is valid and allows every peer.
        let p = setup("proxyproto {\nallow\n}").unwrap();
        assert_eq!(p.policy(ip("192.0.2.1")), ProxyPolicy::Use);
    }

    #[test]
    fn default_without_allow_applies_to_every_peer() {
        // CoreDNS's TestDefaultPolicyWithoutAllow.
        for (word, policy) in [
            ("reject", ProxyPolicy::Reject),
            ("ignore", ProxyPolicy::Ignore),
            ("use", ProxyPolicy::Use),
            ("skip", ProxyPolicy::Skip),
        ] {
            let p = setup(&format!("proxyproto {{\ndefault {word}\n}}")).unwrap();
            assert_eq!(p.policy(ip("192.0.2.1")), policy, "{word}");
        }
    }

    #[test]
    fn udp_session_tracking_takes_a_duration_and_a_cap() {
        let p = setup("proxyproto {\nudp_session_tracking 28s\n}").unwrap();
        assert_eq!(p.session_ttl, Duration::from_secs(28));
        assert_eq!(p.session_cap(), 10_240);
        let p = setup("proxyproto {\nallow 10.0.0.0/8\nudp_session_tracking 1m 500\n}").unwrap();
        assert_eq!(p.session_ttl, Duration::from_secs(60));
        assert_eq!(p.session_cap(), 500);
        let p = setup("proxyproto {\nudp_session_tracking -5s\n}").unwrap();
        assert!(!p.tracks_sessions(), "a negative duration tracks nothing");
    }

    #[test]
    fn occurrences_in_one_block_add_up() {
        let p = setup("proxyproto {\nallow 10.0.0.0/8\n}\nproxyproto {\nallow 192.0.2.0/24\ndefault reject\n}")
            .unwrap();
        assert_eq!(p.allow.len(), 2);
        assert_eq!(p.default, Some(ProxyPolicy::Reject));
    }

    #[test]
    fn errors_are_coredns_s_at_their_line() {
        let e = |t: &str| setup(t).unwrap_err();
        assert_eq!(
            e("proxyproto {\nunknown\n}"),
            "Corefile:3 - Error during parsing: unknown option 'unknown'"
        );
        assert_eq!(
            e("proxyproto extra_arg"),
            "Corefile:2 - Error during parsing: plugin/proxyproto: Wrong argument count or unexpected line ending after 'extra_arg'"
        );
        assert_eq!(
            e("proxyproto {\nallow invalid_ip\n}"),
            "Corefile:3 - Error during parsing: plugin/proxyproto: invalid_ip: invalid CIDR address: invalid_ip"
        );
        assert!(e("proxyproto {\nallow 10.0.0.0/33\n}").contains("invalid CIDR address"));
        assert!(
            e("proxyproto {\nallow 127.0.0.1/8\ndefault invalid_policy\n}")
                .contains("plugin/proxyproto: Wrong argument count")
        );
        assert!(e("proxyproto {\ndefault\n}").contains("Wrong argument count"));
        assert!(e("proxyproto {\nudp_session_tracking\n}").contains("Wrong argument count"));
        assert!(
            e("proxyproto {\nudp_session_tracking 28s 100 extra\n}")
                .contains("Wrong argument count")
        );
        assert_eq!(
            e("proxyproto {\nudp_session_tracking notaduration\n}"),
            "Corefile:3 - Error during parsing: plugin/proxyproto: udp_session_tracking: invalid duration \"notaduration\": time: invalid duration \"notaduration\""
        );
        for bad in ["notanumber", "0", "-1"] {
            assert_eq!(
                e(&format!(
                    "proxyproto {{\nudp_session_tracking 28s {bad}\n}}"
                )),
                format!(
                    "Corefile:3 - Error during parsing: plugin/proxyproto: udp_session_tracking: invalid max sessions \"{bad}\": must be a positive integer"
                )
            );
        }
    }
}
