//! CoreDNS's three template families (`plugin/template/metrics.go`), counted per core:
//!
//! - `coredns_template_matches_total{server, zone, view, class, type}`: queries answered
//!   by a template (a regex matched);
//! - `coredns_template_template_failures_total{server, zone, view, class, type, section,
//!   template}`: renderings that failed;
//! - `coredns_template_rr_failures_total{…same…}`: renderings that gave no valid record.
//!
//! The labels depend on the query (its class and type, the template's zone that holds
//! it), so a core's cells are made on first use and kept in a per-core map: only the first
//! answer of each label set takes the registry's lock, and only answers get here, never a
//! query the templates pass on. `view` is the block's `view` name, empty without one.

use ringdns_plugin::metrics::{Counter, Desc, Export, Kind, Sink, registry};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

const LABELS: &[&str] = &["server", "zone", "view", "class", "type"];
const FAILURE_LABELS: &[&str] = &[
    "server", "zone", "view", "class", "type", "section", "template",
];

static MATCHES: Desc = Desc {
    name: "coredns_template_matches_total",
    help: "Counter of template regex matches.",
    kind: Kind::Counter,
    labels: LABELS,
};

static TEMPLATE_FAILURES: Desc = Desc {
    name: "coredns_template_template_failures_total",
    help: "Counter of go template failures.",
    kind: Kind::Counter,
    labels: FAILURE_LABELS,
};

static RR_FAILURES: Desc = Desc {
    name: "coredns_template_rr_failures_total",
    help: "Counter of mis-templated RRs.",
    kind: Kind::Counter,
    labels: FAILURE_LABELS,
};

/// One core's matches for one (server, zone, view, class, type).
#[derive(Default)]
struct Matches(Counter);

impl Export for Matches {
    fn export(&self, l: &[String], _core: usize, out: &mut Sink) {
        out.counter(&MATCHES, &[&l[0], &l[1], &l[2], &l[3], &l[4]], self.0.get());
    }
}

/// One core's failures of one kind for one (server, zone, view, class, type, section,
/// template).
#[derive(Default)]
struct TemplateFailures(Counter);

#[derive(Default)]
struct RrFailures(Counter);

fn failure_labels(l: &[String]) -> [&str; 7] {
    std::array::from_fn(|i| l[i].as_str())
}

impl Export for TemplateFailures {
    fn export(&self, l: &[String], _core: usize, out: &mut Sink) {
        out.counter(&TEMPLATE_FAILURES, &failure_labels(l), self.0.get());
    }
}

impl Export for RrFailures {
    fn export(&self, l: &[String], _core: usize, out: &mut Sink) {
        out.counter(&RR_FAILURES, &failure_labels(l), self.0.get());
    }
}

/// What a count is about: the listener and zone (class and type come as label values).
pub struct Labels<'a> {
    /// The listener (`dns://:53`).
    pub server: &'a str,
    /// The template's zone.
    pub zone: &'a str,
}

/// Which failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Failure {
    /// The template did not execute.
    Template,
    /// Its text was no record.
    Rr,
}

type Key = (String, String, &'static str, &'static str);

/// A failure's key: the match's, the section and the template's label.
type FailureKey = (Key, &'static str, String);

/// A core's counters, made as label sets first occur.
#[derive(Default)]
pub struct Counters {
    core: usize,
    view: String,
    matches: RefCell<HashMap<Key, Arc<Matches>>>,
    template_failures: RefCell<HashMap<FailureKey, Arc<TemplateFailures>>>,
    rr_failures: RefCell<HashMap<FailureKey, Arc<RrFailures>>>,
}

impl Counters {
    /// The counters of core `core` for a block of view `view` (empty without one).
    pub fn new(core: usize, view: &str) -> Self {
        Counters {
            core,
            view: view.to_string(),
            ..Counters::default()
        }
    }

    fn key(l: &Labels<'_>, class: &'static str, rtype: &'static str) -> Key {
        (l.server.to_string(), l.zone.to_string(), class, rtype)
    }

    /// Counts a match. `class` and `rtype` are the label values (static mnemonics).
    pub fn matched(&self, l: &Labels<'_>, class: &'static str, rtype: &'static str) {
        let key = Self::key(l, class, rtype);
        let mut m = self.matches.borrow_mut();
        let cell = m.entry(key).or_insert_with(|| {
            registry::cell(&[l.server, l.zone, &self.view, class, rtype], self.core)
        });
        cell.0.inc();
    }

    /// Counts a failure of the record template of `section` printed as `label`.
    pub fn failed(
        &self,
        what: Failure,
        l: &Labels<'_>,
        (class, rtype): (&'static str, &'static str),
        section: &'static str,
        label: &str,
    ) {
        let key = (Self::key(l, class, rtype), section, label.to_string());
        let labels = [l.server, l.zone, &self.view, class, rtype, section, label];
        match what {
            Failure::Template => {
                let mut m = self.template_failures.borrow_mut();
                let c = m
                    .entry(key)
                    .or_insert_with(|| registry::cell(&labels, self.core));
                c.0.inc();
            }
            Failure::Rr => {
                let mut m = self.rr_failures.borrow_mut();
                let c = m
                    .entry(key)
                    .or_insert_with(|| registry::cell(&labels, self.core));
                c.0.inc();
            }
        }
    }
}
