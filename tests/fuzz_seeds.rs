//! Writes the fuzzers' seed corpora (`fuzz/corpus/TARGET/`) from what the tests use: the
//! queries of the wire tests, the Corefiles of the plugin READMEs (every one of them is
//! started by `tests/plugins_readme.rs`) and of the Corefile reader's tests, and upstream
//! replies like the test authority's. The seeds are committed; run this after changing it:
//!
//! ```sh
//! cargo test --test fuzz_seeds -- --ignored
//! ```

use std::path::{Path, PathBuf};

const A: u16 = 1;
const NS: u16 = 2;
const CNAME: u16 = 5;
const SOA: u16 = 6;
const TXT: u16 = 16;
const AAAA: u16 = 28;
const OPT: u16 = 41;
const AXFR: u16 = 252;

fn header(id: u16, flags: u16, counts: [u16; 4]) -> Vec<u8> {
    let mut p = id.to_be_bytes().to_vec();
    p.extend_from_slice(&flags.to_be_bytes());
    for c in counts {
        p.extend_from_slice(&c.to_be_bytes());
    }
    p
}

fn name(n: &str) -> Vec<u8> {
    let mut w = Vec::new();
    for l in n.split('.').filter(|l| !l.is_empty()) {
        w.push(l.len() as u8);
        w.extend_from_slice(l.as_bytes());
    }
    w.push(0);
    w
}

fn rr(owner: &[u8], rtype: u16, ttl: u32, rdata: &[u8]) -> Vec<u8> {
    let mut r = owner.to_vec();
    r.extend_from_slice(&rtype.to_be_bytes());
    r.extend_from_slice(&1u16.to_be_bytes());
    r.extend_from_slice(&ttl.to_be_bytes());
    r.extend_from_slice(&(rdata.len() as u16).to_be_bytes());
    r.extend_from_slice(rdata);
    r
}

fn opt(udp: u16, ext: u8, version: u8, flags: u16, options: &[u8]) -> Vec<u8> {
    let mut r = vec![0];
    r.extend_from_slice(&OPT.to_be_bytes());
    r.extend_from_slice(&udp.to_be_bytes());
    r.extend_from_slice(&[ext, version]);
    r.extend_from_slice(&flags.to_be_bytes());
    r.extend_from_slice(&(options.len() as u16).to_be_bytes());
    r.extend_from_slice(options);
    r
}

/// A query for `qname`/`qtype` (class IN), RD set, with an OPT when `edns` is given.
fn query(id: u16, qname: &str, qtype: u16, edns: Option<Vec<u8>>) -> Vec<u8> {
    let mut p = header(id, 0x0100, [1, 0, 0, u16::from(edns.is_some())]);
    p.extend_from_slice(&name(qname));
    p.extend_from_slice(&qtype.to_be_bytes());
    p.extend_from_slice(&1u16.to_be_bytes());
    if let Some(o) = edns {
        p.extend_from_slice(&o);
    }
    p
}

/// A reply to `q` (its ID and question) with `rcode`, flags QR RD RA, and the sections.
fn reply(q: &[u8], rcode: u16, sections: [&[Vec<u8>]; 3]) -> Vec<u8> {
    let qend = 12 + q[12..].iter().position(|&b| b == 0).expect("root") + 1 + 4;
    let counts = sections.map(|s| s.len() as u16);
    let mut r = header(
        u16::from_be_bytes([q[0], q[1]]),
        0x8180 | rcode,
        [1, counts[0], counts[1], counts[2]],
    );
    r.extend_from_slice(&q[12..qend]);
    for s in sections {
        for rec in s {
            r.extend_from_slice(rec);
        }
    }
    r
}

fn soa(zone: &str, minimum: u32) -> Vec<u8> {
    let mut rd = name(&format!("ns.{zone}"));
    rd.extend_from_slice(&name(&format!("hostmaster.{zone}")));
    for v in [1u32, 7200, 3600, 1_209_600, minimum] {
        rd.extend_from_slice(&v.to_be_bytes());
    }
    rd
}

const PTR: [u8; 2] = [0xC0, 0x0C];

fn query_seeds() -> Vec<(String, Vec<u8>)> {
    let cookie = [0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8].to_vec();
    let mut all_opts = cookie.clone();
    for o in [
        &[0, 3, 0, 0][..],
        &[0, 8, 0, 7, 0, 1, 24, 0, 192, 0, 2],
        &[0, 9, 0, 4, 0, 0, 0, 9],
        &[0, 11, 0, 2, 0, 0],
        &[0, 12, 0, 4, 0, 0, 0, 0],
        &[0xfd, 0xe9, 0, 1, 7],
    ] {
        all_opts.extend_from_slice(o);
    }
    let mut notify = header(7, 4 << 11, [1, 1, 0, 0]);
    notify.extend_from_slice(&name("example.org"));
    notify.extend_from_slice(&[0, 6, 0, 1]);
    notify.extend_from_slice(&rr(&PTR, SOA, 60, &soa("example.org", 60)));
    let mut loop_owner = header(9, 0, [1, 1, 0, 0]);
    loop_owner.extend_from_slice(&name("a"));
    loop_owner.extend_from_slice(&[0, 1, 0, 1, 0xC0, 0x12, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0]);
    let mut truncated_question = header(3, 0, [1, 0, 0, 0]);
    truncated_question.extend_from_slice(&name("a"));
    truncated_question.extend_from_slice(&[0, 28]);
    let long = format!("{0}.{0}.{0}.{1}", "a".repeat(63), "b".repeat(61));
    let packets: Vec<(&str, Vec<u8>)> = vec![
        ("a", query(1, "www.example.org", A, None)),
        ("mixed-case", query(2, "WwW.ExAmPlE.oRg", AAAA, None)),
        ("root-ns", query(3, ".", NS, None)),
        (
            "edns-do",
            query(4, "example.org", A, Some(opt(1232, 0, 0, 0x8000, &[]))),
        ),
        (
            "edns-cookie",
            query(5, "example.org", TXT, Some(opt(4096, 0, 0, 0, &cookie))),
        ),
        (
            "edns-all-options",
            query(6, "example.org", A, Some(opt(512, 0, 0, 0x8000, &all_opts))),
        ),
        (
            "edns-small",
            query(7, "example.org", A, Some(opt(100, 0, 0, 0, &[]))),
        ),
        (
            "badvers",
            query(8, "example.org", A, Some(opt(2048, 0, 1, 0x8000, &[]))),
        ),
        ("notify-soa", notify),
        ("owner-pointer-loop", loop_owner),
        ("truncated-question", truncated_question),
        ("longest-name", query(10, &long, A, None)),
        ("bare-header", header(11, 0x0100, [1, 0, 0, 0])),
        ("bad-counts", header(12, 0, [2, 0, 0, 0])),
        ("notimp", header(13, 5 << 11, [1, 0, 0, 0])),
        ("response", header(14, 0x8000, [1, 0, 0, 0])),
    ];
    let mut seeds = Vec::new();
    for (n, p) in packets {
        // shape bytes: few answers over UDP; many with TXT, NS and glue, a plugin's OPT;
        // bytes after the last record
        let shapes = [
            ("small", [2u8, 0x10, 0]),
            ("big", [0x80 | 40, 0x2f, 0]),
            ("tcp", [0x40 | 60, 0xbf, 0]),
            ("trailing", [12, 0x13, 200]),
        ];
        for (tag, shape) in shapes {
            let mut d = shape.to_vec();
            d.extend_from_slice(&p);
            seeds.push((format!("{n}-{tag}"), d));
        }
    }
    seeds
}

fn cache_seeds() -> Vec<(String, Vec<u8>)> {
    let q = query(0x1234, "www.example.org", A, None);
    let q_do = query(
        0x1235,
        "www.example.org",
        A,
        Some(opt(1232, 0, 0, 0x8000, &[])),
    );
    let q_mx = query(0x1236, "mail.example.org", 15, None);
    let q_nx = query(0x1237, "nx.example.org", A, None);
    let q_axfr = query(0x1238, "example.org", AXFR, None);
    let a = |ttl, last| rr(&PTR, A, ttl, &[192, 0, 2, last]);
    let soa_rr = rr(&name("example.org"), SOA, 3600, &soa("example.org", 60));
    let cname = rr(&PTR, CNAME, 300, &name("web.example.org"));
    let web_a = rr(&name("web.example.org"), A, 30, &[192, 0, 2, 9]);
    let ns = rr(&name("example.org"), NS, 86400, &name("ns1.example.org"));
    let glue = rr(&name("ns1.example.org"), A, 86400, &[192, 0, 2, 53]);
    let big: Vec<Vec<u8>> = (0..40).map(|i| a(120, i)).collect();
    let mut tc = reply(&q, 0, [&[a(60, 1)], &[], &[]]);
    tc[2] |= 0x02;
    let mut mismatch = reply(&q, 0, [&[a(60, 1)], &[], &[]]);
    mismatch[13] = b'x';
    let answers: Vec<(&str, &[u8], Vec<u8>)> = vec![
        ("a", &q, reply(&q, 0, [&[a(300, 1)], &[], &[]])),
        (
            "a-two-ttls",
            &q,
            reply(&q, 0, [&[a(1, 1), a(86400, 2)], &[], &[]]),
        ),
        ("cname-chain", &q, reply(&q, 0, [&[cname, web_a], &[], &[]])),
        (
            "nxdomain-soa",
            &q_nx,
            reply(&q_nx, 3, [&[], std::slice::from_ref(&soa_rr), &[]]),
        ),
        (
            "nodata-soa",
            &q_mx,
            reply(&q_mx, 0, [&[], std::slice::from_ref(&soa_rr), &[]]),
        ),
        ("nxdomain-no-soa", &q_nx, reply(&q_nx, 3, [&[], &[], &[]])),
        ("referral", &q, reply(&q, 0, [&[], &[ns], &[glue]])),
        ("servfail", &q, reply(&q, 2, [&[], &[], &[]])),
        ("refused", &q, reply(&q, 5, [&[], &[], &[]])),
        ("truncated", &q, tc),
        ("question-mismatch", &q, mismatch),
        (
            "edns-reply",
            &q_do,
            reply(
                &q_do,
                0,
                [&[a(300, 1)], &[], &[opt(1232, 0, 0, 0x8000, &[])]],
            ),
        ),
        (
            "edns-badcookie",
            &q_do,
            reply(&q_do, 7, [&[], &[], &[opt(1232, 1, 0, 0, &[])]]),
        ),
        ("forty-answers", &q_do, reply(&q_do, 0, [&big, &[], &[]])),
        ("axfr", &q_axfr, reply(&q_axfr, 0, [&[soa_rr], &[], &[]])),
    ];
    let mut seeds = Vec::new();
    for (n, query, answer) in answers {
        for (config, flags) in [
            (0u8, 0u8),
            (1, 0b0101),
            (4, 0b1110),
            (5, 0b1001),
            (7, 0b0100),
        ] {
            let mut d = vec![config, flags];
            d.extend_from_slice(&(query.len() as u16).to_be_bytes());
            d.extend_from_slice(query);
            d.extend_from_slice(&answer);
            seeds.push((format!("{n}-c{config}-f{flags}"), d));
        }
    }
    seeds
}

/// `~~~ corefile` blocks of a Markdown file.
fn corefile_blocks(md: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(md).unwrap_or_default();
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    for line in text.lines() {
        match &mut cur {
            None if line.trim_start().starts_with("~~~ corefile") => cur = Some(String::new()),
            Some(c) if line.trim_start().starts_with("~~~") => {
                out.push(std::mem::take(c));
                cur = None;
            }
            Some(c) => {
                c.push_str(line);
                c.push('\n');
            }
            None => {}
        }
    }
    out
}

fn corefile_seeds(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut seeds = Vec::new();
    let mut mds: Vec<PathBuf> = std::fs::read_dir(root.join("plugins"))
        .expect("plugins")
        .flatten()
        .map(|e| e.path().join("README.md"))
        .collect();
    mds.extend([root.join("README.md"), root.join("tuning/README.md")]);
    mds.sort();
    for md in &mds {
        let stem = md
            .parent()
            .and_then(Path::file_name)
            .map_or("readme".into(), |n| n.to_string_lossy().into_owned());
        for (i, block) in corefile_blocks(md).into_iter().enumerate() {
            seeds.push((format!("readme-{stem}-{i}"), block.into_bytes()));
        }
    }
    let example = std::fs::read(root.join("Corefile.example")).expect("Corefile.example");
    seeds.push(("corefile-example".into(), example));
    // What the Corefile reader's tests cover: the files and variables of checks::corefile.
    let texts = [
        (
            "import-file",
            "example.org:1053 {\n    import a.conf\n    whoami\n}\n",
        ),
        (
            "import-glob",
            ".:1053 {\n    import snip/*\n    whoami\n}\n",
        ),
        (
            "import-block",
            "import block.conf\n.:2053 {\n    whoami\n}\n",
        ),
        ("import-cycle", ".:1053 {\n    import cycle.conf\n}\n"),
        (
            "import-snippet-file",
            "import b.conf\n. {\n    import snip\n}\n",
        ),
        (
            "snippet",
            "(common) {\n    log\n    errors\n}\nexample.org {\n    import common\n    whoami\n}\n",
        ),
        (
            "snippet-args",
            "(fwd) {\n    forward . {args[0]}\n}\n.:1053 {\n    import fwd 127.0.0.1\n}\n",
        ),
        (
            "env",
            "{$ZONE}:{$PORT} {\n    forward . {$UP}\n    cache\n}\n",
        ),
        (
            "env-windows",
            "{%ZONE%}:{%PORT%} {\n    {$IMPORT} {$X}\n}\n",
        ),
        ("env-nested", "{$NEST} {\n    whoami\n}\n"),
        ("env-unset", "{$NOPE}.:1053 {\n    whoami {$EMPTY}\n}\n"),
        (
            "global",
            "{\n    workers 2\n    udp_batch 32\n    cpus 0-1\n}\n.:1053 {\n    whoami\n}\n",
        ),
        (
            "quotes",
            ".:1053 {\n    log . \"{remote} {type} {name}\"\n    whoami\n}\n",
        ),
        ("reverse", "10.0.0.0/24 {\n    whoami\n}\n"),
        (
            "keys",
            "dns://example.org:1053 example.net {\n    cache 30 example.org\n    import cache.conf\n}\n",
        ),
        ("unknown", ".:1053 {\n    nosuchplugin\n}\n"),
        (
            "http",
            ".:1053 {\n    health :8080 {\n        lameduck 5s\n    }\n    ready 127.0.0.1:8181\n    prometheus localhost:9153\n    whoami\n}\n",
        ),
        ("open", ".:1053 {\n    import open.conf\n"),
    ];
    for (n, t) in texts {
        seeds.push((n.to_string(), t.as_bytes().to_vec()));
    }
    seeds
}

fn write(dir: &Path, seeds: Vec<(String, Vec<u8>)>) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("corpus dir");
    for (n, d) in seeds {
        std::fs::write(dir.join(n), d).expect("seed");
    }
}

#[test]
#[ignore = "writes fuzz/corpus; run by hand (see the module doc)"]
fn write_seeds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = root.join("fuzz/corpus");
    write(&corpus.join("query"), query_seeds());
    write(&corpus.join("cache_reply"), cache_seeds());
    write(&corpus.join("corefile"), corefile_seeds(root));
}
