//! The reordering allocates nothing once a core's scratch has grown (docs/plugins.md, the
//! hot-path rules): a counting global allocator, as the server's tests/alloc.rs has, around
//! the plugin's `serve_now` over replies of the in-place path and of the re-encoding one.

use ringdns_plugin::wire::rtype::{A, CNAME, MX};
use ringdns_plugin::wire::{MessageWriter, Name, Owner, Query, QueryBuilder, Section, records};
use ringdns_plugin::{CoreInfo, Handler, Outcome, Proto, Request, Serve, Status};
use ringdns_plugin_loadbalance::RingdnsPlugin as LoadBalance;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;

/// Counts the allocations (alloc, alloc_zeroed, realloc) made on the current thread.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn bump() {
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: every call is forwarded unchanged to `System`; counting touches only a
// const-initialised thread-local `Cell` (no lazy initialisation, no destructor, no
// allocation).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        bump();
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        bump();
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        bump();
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// A next plugin that writes a given reply into the request's buffer.
struct Writes(Vec<u8>);

impl Handler for Writes {
    async fn serve(&self, req: &mut Request<'_>) -> Outcome {
        Ok(self.write(req))
    }
    fn serve_now(&self, req: &mut Request<'_>) -> Option<Status> {
        Some(self.write(req))
    }
    fn is_end(&self) -> bool {
        false
    }
    fn after_batch(&self) {}
}

impl Writes {
    fn write(&self, req: &mut Request<'_>) -> Status {
        req.reply.clear();
        req.reply.extend_from_slice(&self.0);
        Status::written()
    }
}

fn query() -> Vec<u8> {
    let n = Name::from_wire(b"\x03www\x07example\x03org\x00").unwrap();
    QueryBuilder::new(n, A).id(9).build()
}

fn reply(recs: &[(Owner<'_>, u16, Vec<u8>)]) -> Vec<u8> {
    let packet = query();
    let q = Query::parse(&packet).unwrap();
    let mut out = Vec::new();
    let mut w = MessageWriter::reply(&q, &mut out, 0);
    for (o, t, rd) in recs {
        w.push(Section::Answer, *o, *t, 1, 60, rd).unwrap();
    }
    w.finish();
    out
}

fn first_rdata(m: &[u8]) -> Vec<u8> {
    let r = records(m).unwrap().next().unwrap().unwrap();
    m[r.rdata].to_vec()
}

/// Serves `upstream` through the plugin `n` times after a warm-up; the allocations counted
/// and the distinct first records seen (read after counting).
fn count(corefile: &str, upstream: Vec<u8>, n: usize) -> (u64, usize) {
    let (_, config) = ringdns_testkit::config::<LoadBalance>(corefile).unwrap();
    let lb = LoadBalance::build(
        &Arc::new(config),
        &CoreInfo {
            index: 0,
            cpu: 0,
            cores: 1,
        },
    )
    .unwrap();
    let packet = query();
    let next = Writes(upstream);
    let at = "127.0.0.1:5353".parse().unwrap();
    let mut reply = Vec::with_capacity(4096);
    let mut firsts = Vec::with_capacity(n);
    let serve = |reply: &mut Vec<u8>| {
        let q = Query::parse(&packet).unwrap();
        let mut req = Request::new(q, at, at, Proto::Udp, ".", "dns://:53", reply, false);
        lb.serve_now(&mut req, &next).unwrap();
    };
    serve(&mut reply);
    let mut total = 0;
    for _ in 0..n {
        let before = allocations();
        serve(&mut reply);
        total += allocations() - before;
        let r = records(&reply).unwrap().next().unwrap().unwrap();
        let mut first = [0u8; 4];
        first.copy_from_slice(&reply[r.rdata.start..r.rdata.start + 4.min(r.rdata.len())]);
        firsts.push(first);
    }
    firsts.sort();
    firsts.dedup();
    (total, firsts.len())
}

#[test]
fn the_in_place_shuffle_allocates_nothing() {
    let recs: Vec<_> = (1..=4)
        .map(|k| (Owner::Question, A, vec![10, 0, 0, k]))
        .collect();
    let (allocs, firsts) = count(". {\n loadbalance round_robin\n}\n", reply(&recs), 500);
    assert!(firsts > 1, "the records moved");
    assert_eq!(allocs, 0, "allocations in 500 shuffles");
}

#[test]
fn the_reencoding_and_prefer_allocate_nothing() {
    let web = b"\x03web\x07example\x03org\x00";
    let mut mx = vec![0, 10];
    mx.extend_from_slice(web);
    let recs = vec![
        (Owner::Wire(web), A, vec![10, 0, 0, 1]),
        (Owner::Question, MX, mx),
        (Owner::Wire(web), A, vec![10, 0, 0, 2]),
        (Owner::Question, CNAME, web.to_vec()),
        (Owner::Wire(web), A, vec![10, 0, 0, 3]),
    ];
    let upstream = reply(&recs);
    assert_eq!(first_rdata(&upstream), [10, 0, 0, 1]);
    let (allocs, _) = count(
        ". {\n loadbalance round_robin {\n prefer 10.0.0.2/32\n }\n}\n",
        upstream,
        500,
    );
    assert_eq!(allocs, 0, "allocations in 500 re-encodings");
}

#[test]
fn the_counter_sees_allocations() {
    let before = allocations();
    let v: Vec<u8> = std::hint::black_box(Vec::with_capacity(10));
    drop(v);
    assert!(allocations() > before);
}
