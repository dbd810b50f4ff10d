#!/usr/bin/env python3
"""Zone and query file of bench/run.sh's `auth` workload and of bench/zone_load.sh.

    auth_zone.py --zone FILE [--names N] [--queries FILE --count M] [--seed S]
    auth_zone.py --zone FILE --records R          # a zone of about R records (zone_load.sh)

The zone is `bench.test.` (plain RFC 1035 syntax that NSD, Knot and ringdns's `file` all
load). For N names (default 100 000) it has, besides the apex (SOA, two NS with addresses,
MX) and `ready A 127.0.0.2` (run.sh's readiness probe):

    hI     A (and one in four an AAAA too)       60 % of N
    mI     MX 10 hJ (a target in the zone)        5 %
    cI     CNAME hJ                              10 %
    ccI    CNAME cJ (two steps to an address)     2 %
    tI     TXT                                    8 %
    *.wI   A and TXT (a wildcard per subtree)     5 %
    dI     NS ns1.dI, NS ns2.dI, with glue        10 % (delegations)

No wildcard at the apex, so a name that is not there is NXDOMAIN. The query file (dnsperf
format, "name type" per line, in a fixed pseudo-random order) mixes existing names (45 %:
hI A, hI AAAA, mI MX, tI TXT), CNAMEs (15 %: cI A, ccI A), wildcard expansions (15 %:
xK.wI A), referrals (15 %: names below dI, and dI NS) and NXDOMAIN (10 %: nxK.bench.test A).

With --records R the zone is scaled so that it holds about R records (the same mix), for
zone_load.sh's load time and memory measurement; no query file.

Everything is deterministic for a given seed (default 42).
"""

import argparse
import random
import sys

ORIGIN = "bench.test."


def layout(names):
    """Counts per kind for N names."""
    return {
        "h": int(names * 0.60),
        "m": int(names * 0.05),
        "c": int(names * 0.10),
        "cc": int(names * 0.02),
        "t": int(names * 0.08),
        "w": int(names * 0.05),
        "d": int(names * 0.10),
    }


def records_per_name_set(n):
    """Records the zone holds for layout n (for --records)."""
    return (
        n["h"] + n["h"] // 4 + n["m"] + n["c"] + n["cc"] + n["t"] + 2 * n["w"] + 4 * n["d"]
    )


def ip4(i, base=10):
    return f"{base}.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}"


def write_zone(out, n):
    w = out.write
    w(f"$ORIGIN {ORIGIN}\n$TTL 3600\n")
    w("@ IN SOA ns1.bench.test. hostmaster.bench.test. 1 3600 900 604800 300\n")
    w("@ IN NS ns1\n@ IN NS ns2\n@ IN MX 10 h0\n")
    w("ns1 IN A 127.0.0.1\nns2 IN A 127.0.0.1\nready IN A 127.0.0.2\n")
    for i in range(n["h"]):
        w(f"h{i} IN A {ip4(i)}\n")
        if i % 4 == 0:
            w(f"h{i} IN AAAA fd00::{i >> 16:x}:{i & 0xFFFF:x}\n")
    for i in range(n["m"]):
        w(f"m{i} IN MX 10 h{(i * 7) % n['h']}\n")
    for i in range(n["c"]):
        w(f"c{i} IN CNAME h{(i * 13) % n['h']}\n")
    for i in range(n["cc"]):
        w(f"cc{i} IN CNAME c{(i * 3) % n['c']}\n")
    for i in range(n["t"]):
        w(f't{i} IN TXT "bench text {i}"\n')
    for i in range(n["w"]):
        w(f"*.w{i} IN A {ip4(i, 11)}\n")
        w(f'*.w{i} IN TXT "wildcard {i}"\n')
    for i in range(n["d"]):
        w(f"d{i} IN NS ns1.d{i}\nd{i} IN NS ns2.d{i}\n")
        w(f"ns1.d{i} IN A {ip4(i, 12)}\nns2.d{i} IN A {ip4(i, 13)}\n")


def write_queries(out, n, count, rng):
    lines = []
    for k in range(count):
        r = rng.random()
        if r < 0.45:
            s = rng.random()
            if s < 0.55:
                lines.append(f"h{rng.randrange(n['h'])}.{ORIGIN} A")
            elif s < 0.70:
                lines.append(f"h{4 * rng.randrange(n['h'] // 4)}.{ORIGIN} AAAA")
            elif s < 0.85:
                lines.append(f"m{rng.randrange(n['m'])}.{ORIGIN} MX")
            else:
                lines.append(f"t{rng.randrange(n['t'])}.{ORIGIN} TXT")
        elif r < 0.60:
            if rng.random() < 0.8:
                lines.append(f"c{rng.randrange(n['c'])}.{ORIGIN} A")
            else:
                lines.append(f"cc{rng.randrange(n['cc'])}.{ORIGIN} A")
        elif r < 0.75:
            lines.append(f"x{k}.w{rng.randrange(n['w'])}.{ORIGIN} A")
        elif r < 0.90:
            d = rng.randrange(n["d"])
            if rng.random() < 0.8:
                lines.append(f"www{k % 100}.d{d}.{ORIGIN} A")
            else:
                lines.append(f"d{d}.{ORIGIN} NS")
        else:
            lines.append(f"nx{k}.{ORIGIN} A")
    out.write("\n".join(lines))
    out.write("\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--zone", required=True)
    p.add_argument("--names", type=int, default=100_000)
    p.add_argument("--records", type=int)
    p.add_argument("--queries")
    p.add_argument("--count", type=int, default=200_000)
    p.add_argument("--seed", type=int, default=42)
    a = p.parse_args()
    if a.records:
        # scale N so that the zone holds about R records
        per = records_per_name_set(layout(100_000)) / 100_000
        a.names = int(a.records / per) + 1
    if a.names < 100:
        sys.exit("auth_zone.py: --names must be at least 100")
    n = layout(a.names)
    with open(a.zone, "w") as f:
        write_zone(f, n)
    if a.queries:
        with open(a.queries, "w") as f:
            write_queries(f, n, a.count, random.Random(a.seed))
    total = records_per_name_set(n) + 7
    owners = sum(n.values()) + 2 * n["d"] + 4
    print(f"{a.zone}: {owners} names, {total} records", file=sys.stderr)


if __name__ == "__main__":
    main()
