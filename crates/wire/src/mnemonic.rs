//! Mnemonics for types, classes and rcodes in logs and metric labels,
//! spelled as miekg/dns (and so CoreDNS) spells them, without allocating.

use std::fmt;

/// Display adapter for a record type: `A`, `AAAA`, `NSAP-PTR`, … or
/// `TYPE123` (miekg `Type.String`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TypeName(pub u16);

/// Display adapter for a class: `IN`, `CS`, `CH`, `HS`, `NONE`, or
/// `CLASS9` (miekg `Class.String`, which prints 255 as `CLASS255` because
/// `ANY` is also a type mnemonic).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClassName(pub u16);

/// Display adapter for an rcode: `NOERROR`, `NXDOMAIN`, `BADSIG` (16), …
/// or `RCODE42` (CoreDNS `rcode.ToString` over miekg `RcodeToString`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RcodeName(pub u16);

/// The mnemonic of a record type, for logs and metrics.
#[inline]
pub fn type_name(t: u16) -> TypeName {
    TypeName(t)
}

/// The mnemonic of a class, for logs.
#[inline]
pub fn class_name(c: u16) -> ClassName {
    ClassName(c)
}

/// The mnemonic of an rcode, for logs and the `rcode` metric label.
#[inline]
pub fn rcode_name(r: u16) -> RcodeName {
    RcodeName(r)
}

/// miekg's `StringToType`: the type a mnemonic names, exactly as spelt (`A`, `NSAP-PTR`);
/// for configuration (template's and rewrite's types), off the query path.
pub fn type_from_str(s: &str) -> Option<u16> {
    (0..=u16::MAX).find(|t| TypeName(*t).as_str() == Some(s))
}

/// miekg's `StringToClass`: `IN`, `CS`, `CH`, `HS`, `NONE`, `ANY`.
pub fn class_from_str(s: &str) -> Option<u16> {
    Some(match s {
        "IN" => 1,
        "CS" => 2,
        "CH" => 3,
        "HS" => 4,
        "NONE" => 254,
        "ANY" => 255,
        _ => return None,
    })
}

/// miekg's `StringToRcode`: the rcode a mnemonic names, exactly as spelt.
pub fn rcode_from_str(s: &str) -> Option<u16> {
    (0..=4095u16).find(|r| RcodeName(*r).as_str() == Some(s))
}

impl TypeName {
    /// The mnemonic, `None` when it prints as `TYPEn`.
    pub fn as_str(self) -> Option<&'static str> {
        Some(match self.0 {
            0 => "None",
            1 => "A",
            2 => "NS",
            3 => "MD",
            4 => "MF",
            5 => "CNAME",
            6 => "SOA",
            7 => "MB",
            8 => "MG",
            9 => "MR",
            10 => "NULL",
            12 => "PTR",
            13 => "HINFO",
            14 => "MINFO",
            15 => "MX",
            16 => "TXT",
            17 => "RP",
            18 => "AFSDB",
            19 => "X25",
            20 => "ISDN",
            21 => "RT",
            23 => "NSAP-PTR",
            24 => "SIG",
            25 => "KEY",
            26 => "PX",
            27 => "GPOS",
            28 => "AAAA",
            29 => "LOC",
            30 => "NXT",
            31 => "EID",
            32 => "NIMLOC",
            33 => "SRV",
            34 => "ATMA",
            35 => "NAPTR",
            36 => "KX",
            37 => "CERT",
            39 => "DNAME",
            41 => "OPT",
            42 => "APL",
            43 => "DS",
            44 => "SSHFP",
            45 => "IPSECKEY",
            46 => "RRSIG",
            47 => "NSEC",
            48 => "DNSKEY",
            49 => "DHCID",
            50 => "NSEC3",
            51 => "NSEC3PARAM",
            52 => "TLSA",
            53 => "SMIMEA",
            55 => "HIP",
            56 => "NINFO",
            57 => "RKEY",
            58 => "TALINK",
            59 => "CDS",
            60 => "CDNSKEY",
            61 => "OPENPGPKEY",
            62 => "CSYNC",
            63 => "ZONEMD",
            64 => "SVCB",
            65 => "HTTPS",
            99 => "SPF",
            100 => "UINFO",
            101 => "UID",
            102 => "GID",
            103 => "UNSPEC",
            104 => "NID",
            105 => "L32",
            106 => "L64",
            107 => "LP",
            108 => "EUI48",
            109 => "EUI64",
            128 => "NXNAME",
            249 => "TKEY",
            250 => "TSIG",
            251 => "IXFR",
            252 => "AXFR",
            253 => "MAILB",
            254 => "MAILA",
            255 => "ANY",
            256 => "URI",
            257 => "CAA",
            258 => "AVC",
            260 => "AMTRELAY",
            261 => "RESINFO",
            32768 => "TA",
            32769 => "DLV",
            65535 => "Reserved",
            _ => return None,
        })
    }
}

impl ClassName {
    /// The mnemonic, `None` when it prints as `CLASSn`.
    pub fn as_str(self) -> Option<&'static str> {
        Some(match self.0 {
            1 => "IN",
            2 => "CS",
            3 => "CH",
            4 => "HS",
            254 => "NONE",
            _ => return None,
        })
    }
}

impl RcodeName {
    /// The mnemonic, `None` when it prints as `RCODEn`.
    pub fn as_str(self) -> Option<&'static str> {
        Some(match self.0 {
            0 => "NOERROR",
            1 => "FORMERR",
            2 => "SERVFAIL",
            3 => "NXDOMAIN",
            4 => "NOTIMP",
            5 => "REFUSED",
            6 => "YXDOMAIN",
            7 => "YXRRSET",
            8 => "NXRRSET",
            9 => "NOTAUTH",
            10 => "NOTZONE",
            11 => "DSOTYPENI",
            16 => "BADSIG",
            17 => "BADKEY",
            18 => "BADTIME",
            19 => "BADMODE",
            20 => "BADNAME",
            21 => "BADALG",
            22 => "BADTRUNC",
            23 => "BADCOOKIE",
            _ => return None,
        })
    }
}

impl fmt::Display for TypeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_str() {
            Some(s) => f.write_str(s),
            None => write!(f, "TYPE{}", self.0),
        }
    }
}

impl fmt::Display for ClassName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_str() {
            Some(s) => f.write_str(s),
            None => write!(f, "CLASS{}", self.0),
        }
    }
}

impl fmt::Display for RcodeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_str() {
            Some(s) => f.write_str(s),
            None => write!(f, "RCODE{}", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types() {
        for (t, s) in [
            (1, "A"),
            (28, "AAAA"),
            (15, "MX"),
            (65, "HTTPS"),
            (23, "NSAP-PTR"),
            (0, "None"),
            (255, "ANY"),
            (65535, "Reserved"),
            (123, "TYPE123"),
            (11, "TYPE11"),
            (65534, "TYPE65534"),
        ] {
            assert_eq!(type_name(t).to_string(), s);
        }
    }

    #[test]
    fn classes() {
        for (c, s) in [
            (1, "IN"),
            (3, "CH"),
            (4, "HS"),
            (254, "NONE"),
            (255, "CLASS255"),
            (9, "CLASS9"),
            (0, "CLASS0"),
        ] {
            assert_eq!(class_name(c).to_string(), s);
        }
    }

    #[test]
    fn rcodes() {
        for (r, s) in [
            (0, "NOERROR"),
            (1, "FORMERR"),
            (2, "SERVFAIL"),
            (3, "NXDOMAIN"),
            (4, "NOTIMP"),
            (5, "REFUSED"),
            (6, "YXDOMAIN"),
            (7, "YXRRSET"),
            (8, "NXRRSET"),
            (9, "NOTAUTH"),
            (10, "NOTZONE"),
            (16, "BADSIG"),
            (23, "BADCOOKIE"),
            (12, "RCODE12"),
            (24, "RCODE24"),
        ] {
            assert_eq!(rcode_name(r).to_string(), s);
        }
    }
}
