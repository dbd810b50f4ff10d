//! Parsing of the `kubernetes` directive as CoreDNS's `plugin/kubernetes/setup.go` parses it:
//! the same options, defaults, checks and error texts (each prefixed `plugin/kubernetes: `).
//!
//! ```text
//! kubernetes [ZONES...] {
//!     endpoint URL
//!     tls CERT KEY CACERT
//!     kubeconfig KUBECONFIG [CONTEXT]
//!     namespaces NAMESPACE...
//!     labels EXPRESSION
//!     namespace_labels EXPRESSION
//!     pods POD-MODE
//!     endpoint_pod_names
//!     ttl TTL
//!     noendpoints
//!     fallthrough [ZONES...]
//!     ignore empty_service
//!     startup_timeout DURATION
//!     apiserver_qps QPS
//!     apiserver_burst BURST
//!     apiserver_max_inflight N
//! }
//! ```

use crate::selector;
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::duration::go_atoi;
use ringdns_plugin::normalize::origins_from_args_or_block;
use ringdns_plugin::quote::go_quote;
use ringdns_plugin::wire::name_to_wire;
use ringdns_plugin::{BlockSetup, Fallthrough};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

/// CoreDNS's default TTL of every record (`defaultTTL`).
pub const DEFAULT_TTL: u32 = 5;
/// How long the server start waits for the first sync (CoreDNS's `startupTimeout`).
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(5);

/// `pods disabled|insecure|verified`: what `a-b-c-d.NS.pod.ZONE` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PodMode {
    /// No pod records (NXDOMAIN), the default.
    #[default]
    Disabled,
    /// The address the name spells, whether or not a pod has it (kube-dns's behaviour).
    Insecure,
    /// Only an address a pod of that namespace has (needs the Pods watch).
    Verified,
}

/// Where the API server is, as the options say.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Source {
    /// Neither `endpoint` nor `kubeconfig`: the pod's service account.
    #[default]
    InCluster,
    /// `endpoint URL` (and `tls CERT KEY CACERT`).
    Endpoint {
        /// The first URL given (CoreDNS uses only that one).
        url: String,
        /// Client certificate, key and CA, when `tls` is given.
        tls: Option<[PathBuf; 3]>,
    },
    /// `kubeconfig FILE [CONTEXT]`.
    Kubeconfig {
        /// The file, resolved against `root`.
        path: PathBuf,
        /// The context to use instead of the file's current-context.
        context: Option<String>,
    },
}

/// What the directive says.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The zones served, lower-case FQDNs, in order.
    pub zones: Vec<String>,
    /// The same in wire form.
    pub zone_wires: Vec<Vec<u8>>,
    /// The first zone that is not a reverse zone: PTR targets are named under it.
    pub primary: usize,
    /// Where the API is.
    pub source: Source,
    /// `tls` given without `endpoint`: CoreDNS ignores it then (it only applies to an
    /// endpoint); kept to say so.
    pub tls_alone: bool,
    /// `namespaces`: the only namespaces answered (empty: all).
    pub namespaces: BTreeSet<String>,
    /// `labels`: the selector of the services, slices and pods watched.
    pub labels: Option<String>,
    /// `namespace_labels`: the selector of the namespaces answered.
    pub namespace_labels: Option<String>,
    /// `pods`.
    pub pods: PodMode,
    /// `endpoint_pod_names`: an endpoint without a hostname is named by its pod.
    pub endpoint_pod_names: bool,
    /// `ttl`.
    pub ttl: u32,
    /// `noendpoints`: no EndpointSlice watch (headless services and endpoint names answer
    /// nothing).
    pub noendpoints: bool,
    /// `fallthrough [ZONES...]`.
    pub fall: Fallthrough,
    /// `ignore empty_service`: a ClusterIP service without ready endpoints is NXDOMAIN.
    pub ignore_empty_service: bool,
    /// `startup_timeout`.
    pub startup_timeout: Duration,
    /// `apiserver_qps` (0: client-go's default).
    pub qps: f32,
    /// `apiserver_burst` (0: client-go's default).
    pub burst: u32,
    /// `apiserver_max_inflight` (0: no limit).
    pub max_inflight: u32,
}

impl Options {
    fn new(zones: Vec<String>) -> Options {
        Options {
            zone_wires: zones
                .iter()
                .map(|z| name_to_wire(z).unwrap_or_else(|_| vec![0]))
                .collect(),
            zones,
            primary: 0,
            source: Source::InCluster,
            tls_alone: false,
            namespaces: BTreeSet::new(),
            labels: None,
            namespace_labels: None,
            pods: PodMode::Disabled,
            endpoint_pod_names: false,
            ttl: DEFAULT_TTL,
            noendpoints: false,
            fall: Fallthrough::default(),
            ignore_empty_service: false,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            qps: 0.0,
            burst: 0,
            max_inflight: 0,
        }
    }

    /// Whether the namespace is one `namespaces` lets through (all when it is not set).
    pub fn configured_namespace(&self, ns: &str) -> bool {
        self.namespaces.is_empty() || self.namespaces.contains(ns)
    }
}

/// Whether a zone is under in-addr.arpa. or ip6.arpa. (CoreDNS's `dnsutil.IsReverse`).
pub fn is_reverse(zone: &str) -> bool {
    let z = zone.to_ascii_lowercase();
    z.ends_with("in-addr.arpa.") || z.ends_with("ip6.arpa.")
}

fn fail(d: &Dispenser<'_>, msg: impl std::fmt::Display) -> Error {
    d.plugin_err("kubernetes", msg)
}

/// Parses the block's `kubernetes` directive; it may appear once per block.
pub fn parse(d: &mut Dispenser<'_>, block: &BlockSetup) -> Result<Options, Error> {
    let mut out = None;
    while d.next() {
        if out.is_some() {
            return Err(fail(
                d,
                "this plugin can only be used once per Server Block",
            ));
        }
        out = Some(stanza(d, block)?);
    }
    out.ok_or_else(|| fail(d, "no kubernetes directive"))
}

fn stanza(d: &mut Dispenser<'_>, block: &BlockSetup) -> Result<Options, Error> {
    let args = d.remaining_args();
    let zones = origins_from_args_or_block("kubernetes", &args, &block.zones);
    let mut o = Options::new(zones);
    o.primary = o
        .zones
        .iter()
        .position(|z| !is_reverse(z))
        .ok_or_else(|| fail(d, "non-reverse zone name must be used"))?;
    let (mut endpoint, mut tls, mut kubeconfig) = (None, None, None);

    while d.next_block() {
        let key = d.val().to_string();
        let args = d.remaining_args();
        match key.as_str() {
            "endpoint_pod_names" => {
                if !args.is_empty() {
                    return Err(d.plugin_arg_err("kubernetes"));
                }
                o.endpoint_pod_names = true;
            }
            "pods" => {
                let [mode] = args.as_slice() else {
                    return Err(d.plugin_arg_err("kubernetes"));
                };
                o.pods = match mode.as_str() {
                    "disabled" => PodMode::Disabled,
                    "insecure" => PodMode::Insecure,
                    "verified" => PodMode::Verified,
                    _ => {
                        return Err(fail(
                            d,
                            format_args!(
                                "wrong value for pods: {mode},  must be one of: disabled, verified, insecure"
                            ),
                        ));
                    }
                };
            }
            "namespaces" => {
                if args.is_empty() {
                    return Err(d.plugin_arg_err("kubernetes"));
                }
                o.namespaces.extend(args);
            }
            "endpoint" => {
                let Some(first) = args.first() else {
                    return Err(d.plugin_arg_err("kubernetes"));
                };
                if args.len() > 1 {
                    ringdns_plugin::warning!(
                        "plugin/kubernetes: Multiple endpoints have been deprecated, only the first specified endpoint '{first}' is used"
                    );
                }
                endpoint = Some(first.clone());
            }
            "tls" => {
                let [cert, key, ca] = args.as_slice() else {
                    return Err(d.plugin_arg_err("kubernetes"));
                };
                tls = Some([cert, key, ca].map(|p| block.resolve_path(p)));
            }
            "labels" | "namespace_labels" => {
                if args.is_empty() {
                    return Err(d.plugin_arg_err("kubernetes"));
                }
                let text = args.join(" ");
                if let Err(e) = selector::check(&text) {
                    let what = if key == "labels" {
                        "label"
                    } else {
                        "namespace_label"
                    };
                    return Err(fail(
                        d,
                        format_args!("unable to parse {what} selector value: '{text}': {e}"),
                    ));
                }
                if key == "labels" {
                    o.labels = Some(text);
                } else {
                    o.namespace_labels = Some(text);
                }
            }
            "fallthrough" => {
                o.fall = Fallthrough::parse(&args).map_err(|e| fail(d, e))?;
            }
            "ttl" => {
                let Some(arg) = args.first() else {
                    return Err(d.plugin_arg_err("kubernetes"));
                };
                let t = go_atoi(arg).map_err(|e| fail(d, e))?;
                if !(0..=3600).contains(&t) {
                    return Err(fail(d, format_args!("ttl must be in range [0, 3600]: {t}")));
                }
                o.ttl = t as u32;
            }
            "noendpoints" => {
                if !args.is_empty() {
                    return Err(d.plugin_arg_err("kubernetes"));
                }
                o.noendpoints = true;
            }
            "ignore" => match args.first().map(String::as_str) {
                Some("empty_service") => o.ignore_empty_service = true,
                Some(other) => {
                    return Err(fail(
                        d,
                        format_args!("unable to parse ignore value: '{other}'"),
                    ));
                }
                // CoreDNS accepts a bare `ignore` and does nothing with it.
                None => {}
            },
            "kubeconfig" => {
                if args.is_empty() || args.len() > 2 {
                    return Err(d.plugin_arg_err("kubernetes"));
                }
                kubeconfig = Some((block.resolve_path(&args[0]), args.get(1).cloned()));
            }
            "startup_timeout" => {
                let Some(arg) = args.first() else {
                    return Err(d.plugin_arg_err("kubernetes"));
                };
                o.startup_timeout = ringdns_plugin::duration::parse(arg).map_err(|e| {
                    fail(
                        d,
                        format_args!("failed to parse startup_timeout: {arg}, {e}"),
                    )
                })?;
            }
            "apiserver_qps" => {
                let [arg] = args.as_slice() else {
                    return Err(d.plugin_arg_err("kubernetes"));
                };
                let qps: f32 = arg.parse().map_err(|_| {
                    fail(
                        d,
                        format_args!(
                            "invalid apiserver_qps {}: strconv.ParseFloat: parsing {}: invalid syntax",
                            go_quote(arg),
                            go_quote(arg)
                        ),
                    )
                })?;
                if qps < 0.0 || qps.is_nan() {
                    return Err(fail(d, "apiserver_qps must be >= 0"));
                }
                o.qps = qps;
            }
            "apiserver_burst" | "apiserver_max_inflight" => {
                let [arg] = args.as_slice() else {
                    return Err(d.plugin_arg_err("kubernetes"));
                };
                let n = go_atoi(arg)
                    .map_err(|e| fail(d, format_args!("invalid {key} {}: {e}", go_quote(arg))))?;
                if n < 0 {
                    return Err(fail(d, format_args!("{key} must be >= 0")));
                }
                let n = u32::try_from(n).unwrap_or(u32::MAX);
                if key == "apiserver_burst" {
                    o.burst = n;
                } else {
                    o.max_inflight = n;
                }
            }
            "multicluster" | "zonal" => {
                return Err(fail(
                    d,
                    format_args!(
                        "'{key}' is not supported by ringdns yet (see the plugin's README)"
                    ),
                ));
            }
            _ => return Err(fail(d, format_args!("unknown property '{key}'"))),
        }
    }

    if !o.namespaces.is_empty() && o.namespace_labels.is_some() {
        return Err(fail(
            d,
            "namespaces and namespace_labels cannot both be set",
        ));
    }
    // CoreDNS: a kubeconfig wins over endpoint and tls; endpoint over in-cluster.
    o.source = match (kubeconfig, endpoint) {
        (Some((path, context)), _) => Source::Kubeconfig { path, context },
        (None, Some(url)) => Source::Endpoint { url, tls },
        (None, None) => {
            o.tls_alone = tls.is_some();
            Source::InCluster
        }
    };
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<Options, String> {
        let text = format!("cluster.local {{\n{text}\n}}\n");
        let cf = ringdns_plugin::corefile::parse("Corefile", &text, &|n| n == "kubernetes")
            .map_err(|e| e.to_string())?;
        let block = BlockSetup {
            zones: vec!["cluster.local.".into()],
            ..Default::default()
        };
        let mut all = Vec::new();
        for dir in &cf.blocks[0].directives {
            all.extend(dir.tokens.iter().cloned());
        }
        parse(&mut Dispenser::new(&all), &block).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_are_coredns_defaults() {
        let o = parse_text("kubernetes").unwrap();
        assert_eq!(o.zones, ["cluster.local."]);
        assert_eq!(o.ttl, 5);
        assert_eq!(o.pods, PodMode::Disabled);
        assert_eq!(o.source, Source::InCluster);
        assert_eq!(o.startup_timeout, Duration::from_secs(5));
        assert!(o.fall.is_off());
        assert!(!o.noendpoints && !o.ignore_empty_service && !o.endpoint_pod_names);
    }

    #[test]
    fn kubeadms_stanza_parses() {
        let o = parse_text(
            "kubernetes cluster.local in-addr.arpa ip6.arpa {\n pods insecure\n fallthrough in-addr.arpa ip6.arpa\n ttl 30\n}",
        )
        .unwrap();
        assert_eq!(o.zones, ["cluster.local.", "in-addr.arpa.", "ip6.arpa."]);
        assert_eq!(o.primary, 0);
        assert_eq!(o.pods, PodMode::Insecure);
        assert_eq!(o.ttl, 30);
        assert!(!o.fall.is_off());
    }

    #[test]
    fn every_option_is_read() {
        let o = parse_text(
            "kubernetes coredns.local {\n endpoint https://10.0.0.1:6443 https://10.0.0.2\n tls cert key ca\n namespaces a b\n labels app=x\n pods verified\n endpoint_pod_names\n ttl 0\n noendpoints\n ignore empty_service\n startup_timeout 1s\n apiserver_qps 5.5\n apiserver_burst 10\n apiserver_max_inflight 3\n}",
        )
        .unwrap();
        assert_eq!(o.zones, ["coredns.local."]);
        assert_eq!(
            o.source,
            Source::Endpoint {
                url: "https://10.0.0.1:6443".into(),
                tls: Some(["cert", "key", "ca"].map(PathBuf::from)),
            }
        );
        assert_eq!(o.namespaces.iter().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(o.labels.as_deref(), Some("app=x"));
        assert_eq!(o.pods, PodMode::Verified);
        assert!(o.endpoint_pod_names && o.noendpoints && o.ignore_empty_service);
        assert_eq!(o.ttl, 0);
        assert_eq!(o.startup_timeout, Duration::from_secs(1));
        assert_eq!((o.qps, o.burst, o.max_inflight), (5.5, 10, 3));
        let k = parse_text("kubernetes {\n kubeconfig /k.yaml ctx\n endpoint http://x\n}").unwrap();
        assert_eq!(
            k.source,
            Source::Kubeconfig {
                path: "/k.yaml".into(),
                context: Some("ctx".into())
            }
        );
    }

    /// CoreDNS's setup_test.go and setup_ttl_test.go error cases, with its texts.
    #[test]
    fn errors_are_coredns_errors() {
        for (text, want) in [
            (
                "kubernetes in-addr.arpa",
                "non-reverse zone name must be used",
            ),
            (
                "kubernetes {\n pods x\n}",
                "wrong value for pods: x,  must be one of: disabled, verified, insecure",
            ),
            ("kubernetes {\n pods\n}", "Wrong argument count"),
            ("kubernetes {\n namespaces\n}", "Wrong argument count"),
            ("kubernetes {\n endpoint\n}", "Wrong argument count"),
            ("kubernetes {\n tls a b\n}", "Wrong argument count"),
            ("kubernetes {\n labels\n}", "Wrong argument count"),
            (
                "kubernetes {\n labels environment in (production, qa\n}",
                "unable to parse label selector value: 'environment in (production, qa'",
            ),
            (
                "kubernetes {\n namespace_labels a=-x\n}",
                "unable to parse namespace_label selector value: 'a=-x'",
            ),
            (
                "kubernetes {\n ttl x\n}",
                "strconv.Atoi: parsing \"x\": invalid syntax",
            ),
            (
                "kubernetes {\n ttl -1\n}",
                "ttl must be in range [0, 3600]: -1",
            ),
            (
                "kubernetes {\n ttl 3601\n}",
                "ttl must be in range [0, 3600]: 3601",
            ),
            ("kubernetes {\n noendpoints x\n}", "Wrong argument count"),
            (
                "kubernetes {\n ignore foo\n}",
                "unable to parse ignore value: 'foo'",
            ),
            ("kubernetes {\n kubeconfig\n}", "Wrong argument count"),
            ("kubernetes {\n kubeconfig a b c\n}", "Wrong argument count"),
            (
                "kubernetes {\n startup_timeout x\n}",
                "failed to parse startup_timeout: x,",
            ),
            (
                "kubernetes {\n apiserver_qps -1\n}",
                "apiserver_qps must be >= 0",
            ),
            (
                "kubernetes {\n apiserver_qps x\n}",
                "invalid apiserver_qps \"x\"",
            ),
            (
                "kubernetes {\n apiserver_burst -1\n}",
                "apiserver_burst must be >= 0",
            ),
            (
                "kubernetes {\n apiserver_max_inflight x\n}",
                "invalid apiserver_max_inflight \"x\": strconv.Atoi",
            ),
            (
                "kubernetes {\n namespaces a\n namespace_labels b=c\n}",
                "namespaces and namespace_labels cannot both be set",
            ),
            ("kubernetes {\n bogus\n}", "unknown property 'bogus'"),
            (
                "kubernetes {\n multicluster\n}",
                "'multicluster' is not supported",
            ),
            (
                "kubernetes\nkubernetes",
                "this plugin can only be used once per Server Block",
            ),
        ] {
            let err = parse_text(text).expect_err(text);
            assert!(err.contains(want), "{text}: {err} (want {want})");
            assert!(
                err.contains("plugin/kubernetes") || want == "Wrong argument count",
                "{err}"
            );
        }
    }

    #[test]
    fn a_bare_ignore_is_accepted_as_coredns_does() {
        assert!(
            !parse_text("kubernetes {\n ignore\n}")
                .unwrap()
                .ignore_empty_service
        );
    }
}
