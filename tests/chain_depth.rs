//! A chain of 64 serving links (and 16 configuration-only plugins between them), expanded by
//! the same `chain!` macro the server's plugin.cfg goes through: so the headroom of lib.rs's
//! `recursion_limit` is known before the real chain grows that long. Each link counts the
//! queries that pass it; the innermost answers.

// The same limit as the server's lib.rs (which says why): this file proves it holds 64 links.
#![recursion_limit = "1024"]

use ringdns::corefile::{Dispenser, Error, parse};
use ringdns::plugin::{
    BlockSetup, ConfigOnly, CoreInfo, Handler, Outcome, Plugin, Proto, Request, Serve, Serves,
    Status,
};
use ringdns::wire::rcode::NOERROR;
use ringdns::wire::{MessageWriter, Query};
use ringdns_testkit::QUERY;
use std::cell::Cell;
use std::sync::Arc;

const PASS_NAMES: [&str; 64] = [
    "p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9", "p10", "p11", "p12", "p13", "p14",
    "p15", "p16", "p17", "p18", "p19", "p20", "p21", "p22", "p23", "p24", "p25", "p26", "p27",
    "p28", "p29", "p30", "p31", "p32", "p33", "p34", "p35", "p36", "p37", "p38", "p39", "p40",
    "p41", "p42", "p43", "p44", "p45", "p46", "p47", "p48", "p49", "p50", "p51", "p52", "p53",
    "p54", "p55", "p56", "p57", "p58", "p59", "p60", "p61", "p62", "p63",
];
const CONF_NAMES: [&str; 16] = [
    "c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9", "c10", "c11", "c12", "c13", "c14",
    "c15",
];

thread_local! {
    /// Links a query passed through, on this thread.
    static PASSED: Cell<usize> = const { Cell::new(0) };
}

/// Takes no arguments; every occurrence of the directive is consumed.
fn no_arguments(d: &mut Dispenser<'_>) -> Result<(), Error> {
    while d.next() {
        if d.next_arg() {
            return Err(d.arg_err());
        }
    }
    Ok(())
}

/// A serving plugin that counts the query and hands it on.
pub struct Pass<const N: usize>;

impl<const N: usize> Plugin for Pass<N> {
    const NAME: &'static str = PASS_NAMES[N];
    type Config = ();
    type Place = Serves;

    fn setup(d: &mut Dispenser<'_>, _block: &mut BlockSetup) -> Result<(), Error> {
        no_arguments(d)
    }
}

impl<const N: usize> Serve for Pass<N> {
    fn build(_config: &Arc<()>, _core: &CoreInfo) -> Option<Self> {
        Some(Pass)
    }

    async fn serve<H: Handler>(&self, req: &mut Request<'_>, next: &H) -> Outcome {
        PASSED.with(|p| p.set(p.get() + 1));
        next.serve(req).await
    }

    fn serve_now<H: Handler>(&self, req: &mut Request<'_>, next: &H) -> Option<Status> {
        PASSED.with(|p| p.set(p.get() + 1));
        next.serve_now(req)
    }
}

/// A plugin that only configures its block: no link.
pub struct Conf<const N: usize>;

impl<const N: usize> Plugin for Conf<N> {
    const NAME: &'static str = CONF_NAMES[N];
    type Config = ();
    type Place = ConfigOnly;

    fn setup(d: &mut Dispenser<'_>, _block: &mut BlockSetup) -> Result<(), Error> {
        no_arguments(d)
    }
}

/// The innermost plugin: NOERROR, empty.
pub struct Answer;

impl Plugin for Answer {
    const NAME: &'static str = "answer";
    type Config = ();
    type Place = Serves;

    fn setup(d: &mut Dispenser<'_>, _block: &mut BlockSetup) -> Result<(), Error> {
        no_arguments(d)
    }
}

impl Serve for Answer {
    fn build(_config: &Arc<()>, _core: &CoreInfo) -> Option<Self> {
        Some(Answer)
    }

    async fn serve<H: Handler>(&self, req: &mut Request<'_>, _next: &H) -> Outcome {
        Ok(answer(req))
    }

    fn serve_now<H: Handler>(&self, req: &mut Request<'_>, _next: &H) -> Option<Status> {
        Some(answer(req))
    }
}

fn answer(req: &mut Request<'_>) -> Status {
    MessageWriter::reply(&req.query, req.reply, NOERROR).finish();
    req.finalize_reply();
    Status::written()
}

mod answer {
    pub type RingdnsPlugin = super::Answer;
}
mod p0 {
    pub type RingdnsPlugin = super::Pass<0>;
}
mod p1 {
    pub type RingdnsPlugin = super::Pass<1>;
}
mod p2 {
    pub type RingdnsPlugin = super::Pass<2>;
}
mod p3 {
    pub type RingdnsPlugin = super::Pass<3>;
}
mod c0 {
    pub type RingdnsPlugin = super::Conf<0>;
}
mod p4 {
    pub type RingdnsPlugin = super::Pass<4>;
}
mod p5 {
    pub type RingdnsPlugin = super::Pass<5>;
}
mod p6 {
    pub type RingdnsPlugin = super::Pass<6>;
}
mod p7 {
    pub type RingdnsPlugin = super::Pass<7>;
}
mod c1 {
    pub type RingdnsPlugin = super::Conf<1>;
}
mod p8 {
    pub type RingdnsPlugin = super::Pass<8>;
}
mod p9 {
    pub type RingdnsPlugin = super::Pass<9>;
}
mod p10 {
    pub type RingdnsPlugin = super::Pass<10>;
}
mod p11 {
    pub type RingdnsPlugin = super::Pass<11>;
}
mod c2 {
    pub type RingdnsPlugin = super::Conf<2>;
}
mod p12 {
    pub type RingdnsPlugin = super::Pass<12>;
}
mod p13 {
    pub type RingdnsPlugin = super::Pass<13>;
}
mod p14 {
    pub type RingdnsPlugin = super::Pass<14>;
}
mod p15 {
    pub type RingdnsPlugin = super::Pass<15>;
}
mod c3 {
    pub type RingdnsPlugin = super::Conf<3>;
}
mod p16 {
    pub type RingdnsPlugin = super::Pass<16>;
}
mod p17 {
    pub type RingdnsPlugin = super::Pass<17>;
}
mod p18 {
    pub type RingdnsPlugin = super::Pass<18>;
}
mod p19 {
    pub type RingdnsPlugin = super::Pass<19>;
}
mod c4 {
    pub type RingdnsPlugin = super::Conf<4>;
}
mod p20 {
    pub type RingdnsPlugin = super::Pass<20>;
}
mod p21 {
    pub type RingdnsPlugin = super::Pass<21>;
}
mod p22 {
    pub type RingdnsPlugin = super::Pass<22>;
}
mod p23 {
    pub type RingdnsPlugin = super::Pass<23>;
}
mod c5 {
    pub type RingdnsPlugin = super::Conf<5>;
}
mod p24 {
    pub type RingdnsPlugin = super::Pass<24>;
}
mod p25 {
    pub type RingdnsPlugin = super::Pass<25>;
}
mod p26 {
    pub type RingdnsPlugin = super::Pass<26>;
}
mod p27 {
    pub type RingdnsPlugin = super::Pass<27>;
}
mod c6 {
    pub type RingdnsPlugin = super::Conf<6>;
}
mod p28 {
    pub type RingdnsPlugin = super::Pass<28>;
}
mod p29 {
    pub type RingdnsPlugin = super::Pass<29>;
}
mod p30 {
    pub type RingdnsPlugin = super::Pass<30>;
}
mod p31 {
    pub type RingdnsPlugin = super::Pass<31>;
}
mod c7 {
    pub type RingdnsPlugin = super::Conf<7>;
}
mod p32 {
    pub type RingdnsPlugin = super::Pass<32>;
}
mod p33 {
    pub type RingdnsPlugin = super::Pass<33>;
}
mod p34 {
    pub type RingdnsPlugin = super::Pass<34>;
}
mod p35 {
    pub type RingdnsPlugin = super::Pass<35>;
}
mod c8 {
    pub type RingdnsPlugin = super::Conf<8>;
}
mod p36 {
    pub type RingdnsPlugin = super::Pass<36>;
}
mod p37 {
    pub type RingdnsPlugin = super::Pass<37>;
}
mod p38 {
    pub type RingdnsPlugin = super::Pass<38>;
}
mod p39 {
    pub type RingdnsPlugin = super::Pass<39>;
}
mod c9 {
    pub type RingdnsPlugin = super::Conf<9>;
}
mod p40 {
    pub type RingdnsPlugin = super::Pass<40>;
}
mod p41 {
    pub type RingdnsPlugin = super::Pass<41>;
}
mod p42 {
    pub type RingdnsPlugin = super::Pass<42>;
}
mod p43 {
    pub type RingdnsPlugin = super::Pass<43>;
}
mod c10 {
    pub type RingdnsPlugin = super::Conf<10>;
}
mod p44 {
    pub type RingdnsPlugin = super::Pass<44>;
}
mod p45 {
    pub type RingdnsPlugin = super::Pass<45>;
}
mod p46 {
    pub type RingdnsPlugin = super::Pass<46>;
}
mod p47 {
    pub type RingdnsPlugin = super::Pass<47>;
}
mod c11 {
    pub type RingdnsPlugin = super::Conf<11>;
}
mod p48 {
    pub type RingdnsPlugin = super::Pass<48>;
}
mod p49 {
    pub type RingdnsPlugin = super::Pass<49>;
}
mod p50 {
    pub type RingdnsPlugin = super::Pass<50>;
}
mod p51 {
    pub type RingdnsPlugin = super::Pass<51>;
}
mod c12 {
    pub type RingdnsPlugin = super::Conf<12>;
}
mod p52 {
    pub type RingdnsPlugin = super::Pass<52>;
}
mod p53 {
    pub type RingdnsPlugin = super::Pass<53>;
}
mod p54 {
    pub type RingdnsPlugin = super::Pass<54>;
}
mod p55 {
    pub type RingdnsPlugin = super::Pass<55>;
}
mod c13 {
    pub type RingdnsPlugin = super::Conf<13>;
}
mod p56 {
    pub type RingdnsPlugin = super::Pass<56>;
}
mod p57 {
    pub type RingdnsPlugin = super::Pass<57>;
}
mod p58 {
    pub type RingdnsPlugin = super::Pass<58>;
}
mod p59 {
    pub type RingdnsPlugin = super::Pass<59>;
}
mod c14 {
    pub type RingdnsPlugin = super::Conf<14>;
}
mod p60 {
    pub type RingdnsPlugin = super::Pass<60>;
}
mod p61 {
    pub type RingdnsPlugin = super::Pass<61>;
}
mod p62 {
    pub type RingdnsPlugin = super::Pass<62>;
}
mod p63 {
    pub type RingdnsPlugin = super::Pass<63>;
}
mod c15 {
    pub type RingdnsPlugin = super::Conf<15>;
}

ringdns::chain! {
    "p0" => p0,
    "p1" => p1,
    "p2" => p2,
    "p3" => p3,
    "c0" => c0,
    "p4" => p4,
    "p5" => p5,
    "p6" => p6,
    "p7" => p7,
    "c1" => c1,
    "p8" => p8,
    "p9" => p9,
    "p10" => p10,
    "p11" => p11,
    "c2" => c2,
    "p12" => p12,
    "p13" => p13,
    "p14" => p14,
    "p15" => p15,
    "c3" => c3,
    "p16" => p16,
    "p17" => p17,
    "p18" => p18,
    "p19" => p19,
    "c4" => c4,
    "p20" => p20,
    "p21" => p21,
    "p22" => p22,
    "p23" => p23,
    "c5" => c5,
    "p24" => p24,
    "p25" => p25,
    "p26" => p26,
    "p27" => p27,
    "c6" => c6,
    "p28" => p28,
    "p29" => p29,
    "p30" => p30,
    "p31" => p31,
    "c7" => c7,
    "p32" => p32,
    "p33" => p33,
    "p34" => p34,
    "p35" => p35,
    "c8" => c8,
    "p36" => p36,
    "p37" => p37,
    "p38" => p38,
    "p39" => p39,
    "c9" => c9,
    "p40" => p40,
    "p41" => p41,
    "p42" => p42,
    "p43" => p43,
    "c10" => c10,
    "p44" => p44,
    "p45" => p45,
    "p46" => p46,
    "p47" => p47,
    "c11" => c11,
    "p48" => p48,
    "p49" => p49,
    "p50" => p50,
    "p51" => p51,
    "c12" => c12,
    "p52" => p52,
    "p53" => p53,
    "p54" => p54,
    "p55" => p55,
    "c13" => c13,
    "p56" => p56,
    "p57" => p57,
    "p58" => p58,
    "p59" => p59,
    "c14" => c14,
    "p60" => p60,
    "p61" => p61,
    "p62" => p62,
    "p63" => p63,
    "c15" => c15,
    "answer" => answer,
}

/// A Corefile whose one block uses every plugin of the chain.
fn chain() -> Chain {
    let mut text = String::from(".:1053 {\n");
    for name in PLUGINS {
        text.push_str(&format!("    {name}\n"));
    }
    text.push_str("}\n");
    let cf = parse("Corefile", &text, &|n| PLUGINS.contains(&n)).expect("the Corefile parses");
    let mut block = BlockSetup::default();
    let configs = setup_block(&cf.blocks[0].directives, &mut block).expect("every setup passes");
    let core = CoreInfo {
        index: 0,
        cpu: 0,
        cores: 1,
    };
    build_chain(&configs, &core)
}

fn request<'a>(reply: &'a mut Vec<u8>) -> Request<'a> {
    let addr = "127.0.0.1:5353".parse().unwrap();
    let query = Query::parse(QUERY).expect("the query parses");
    Request::new(
        query,
        addr,
        addr,
        Proto::Udp,
        ".",
        "dns://:1053",
        reply,
        true,
    )
}

#[test]
fn a_chain_of_64_links_compiles_and_every_link_serves() {
    let chain = chain();
    let mut names = Vec::new();
    chain.plugin_names(&mut names);
    assert_eq!(
        names.len(),
        64 + 1,
        "configuration-only plugins have no link: {names:?}"
    );
    assert_eq!(names[0], "p0");
    assert_eq!(names[64], "answer");

    let mut reply = Vec::new();
    PASSED.with(|p| p.set(0));
    let status = chain
        .serve_now(&mut request(&mut reply))
        .expect("answered at once");
    assert_eq!(status, Status::written());
    assert_eq!(PASSED.with(Cell::get), 64);
    assert_eq!(reply[3] & 0x0f, NOERROR);

    let mut reply = Vec::new();
    PASSED.with(|p| p.set(0));
    let mut req = request(&mut reply);
    let status = futures_lite::future::block_on(chain.serve(&mut req));
    assert_eq!(status, Ok(Status::written()));
    assert_eq!(PASSED.with(Cell::get), 64);
}

#[test]
fn the_future_of_a_64_link_chain_stays_bounded() {
    let chain = chain();
    let mut reply = Vec::new();
    let mut req = request(&mut reply);
    let fut = chain.serve(&mut req);
    let size = std::mem::size_of_val(&fut);
    drop(fut);
    // Each link holds its plugin's future inside its own state: the size grows with the
    // depth, linearly. Printed so a change in the per-link cost shows in the test log.
    println!("the future of a 64-link chain is {size} bytes");
    assert!(size <= 8 * 1024, "{size} bytes");
}
