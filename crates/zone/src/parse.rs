//! The RFC 1035 master-file parser, reading what CoreDNS's `file` plugin reads
//! (miekg/dns's ZoneParser with `$INCLUDE` allowed): `$ORIGIN`, `$TTL`,
//! `$INCLUDE`, `$GENERATE`, TTLs with BIND units, every type domain can scan and
//! RFC 3597 `\#` for any type. The lexer borrows tokens from the file's bytes and
//! the common types are encoded by hand, so that a record costs two allocations
//! (its owner and its RDATA).
//!
//! Where it differs from miekg, on purpose: an owner outside the zone is an error
//! (miekg reads it, CoreDNS drops it silently: NSD refuses it); an unknown `$WORD`
//! directive is an error (miekg takes it for an owner name); a record with no RDATA
//! is an error (miekg makes an empty "dynamic update" record); the first record
//! without any TTL gets 3600 (miekg's `NewRR` default; CoreDNS's parser would
//! refuse `name A …` and give `name IN A …` a TTL of 0).

mod generate;
mod lex;
mod mnemonic;
mod name;
mod rdata;
mod scan;
mod ttl;

#[cfg(test)]
mod tests;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::Record;
use lex::{Lexer, Token};

/// Where a record came from, so that checks made after parsing (CNAME and other
/// data, missing glue, a second SOA) can name the line at fault as a parse error
/// would: an index into [`Parsed::files`] and a 1-based line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pos {
    /// Index into [`Parsed::files`].
    pub file: u16,
    /// 1-based line of the entry's first line.
    pub line: u32,
}

/// A parsed zone: the records in file order (an `$INCLUDE`d file's records where
/// the directive stood), with the position of each at the same index, and every
/// file read (the zone file first, then each `$INCLUDE`d one once).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    /// The records, in the order they were read.
    pub records: Vec<Record>,
    /// `pos[i]` is where `records[i]` was written.
    pub pos: Vec<Pos>,
    /// The files read; [`Pos::file`] indexes this.
    pub files: Vec<PathBuf>,
}

impl Parsed {
    /// `FILE:LINE` of record `i`, so that a check made after parsing reports in the
    /// same form as a [`ParseError`].
    pub fn locate(&self, i: usize) -> String {
        let p = self.pos[i];
        format!("{}:{}", self.files[usize::from(p.file)].display(), p.line)
    }
}

/// A syntax or I/O error, at the first line of the entry at fault; its Display is
/// `FILE:LINE - message`, the form CoreDNS logs, so that messages stay familiar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The file the entry is in (an `$INCLUDE`d one as it was opened).
    pub file: PathBuf,
    /// 1-based line of the entry's first line.
    pub line: u32,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{} - {}",
            self.file.display(),
            self.line,
            self.message
        )
    }
}

impl std::error::Error for ParseError {}

/// Reads and parses the zone file at `path`; `origin` is the zone's absolute wire
/// name, the initial `$ORIGIN`, and every owner must be at or below it.
pub fn parse_file(path: &Path, origin: &[u8]) -> Result<Parsed, ParseError> {
    let src = std::fs::read(path).map_err(|e| ParseError {
        file: path.to_path_buf(),
        line: 1,
        message: format!("cannot read the zone file: {e}"),
    })?;
    parse_bytes(&src, origin, path)
}

/// [`parse_file`] over text in memory (a zone received or built by a test);
/// `file` names it in messages and is the base of relative `$INCLUDE` paths.
pub fn parse_str(text: &str, origin: &[u8], file: &Path) -> Result<Parsed, ParseError> {
    parse_bytes(text.as_bytes(), origin, file)
}

/// Parses one record in presentation format, as CoreDNS's template plugin makes
/// them (`{{.Name}} 60 IN A 10.0.0.1` after expansion): relative names are relative
/// to `origin`, `default_ttl` applies when the text gives no TTL, and no zone
/// bounds the owner. The error is the message alone: the text has no file.
pub fn parse_rr(text: &str, origin: &[u8], default_ttl: u32) -> Result<Record, String> {
    check_origin(origin).map_err(|e| e.to_string())?;
    let mut p = Parser {
        out: Parsed::default(),
        zone: None,
        nested: false,
        open: Vec::new(),
        rdata: Vec::with_capacity(64),
    };
    let path = Path::new("");
    p.out.files.push(path.to_path_buf());
    let mut st = FileState {
        file: 0,
        path,
        origin: origin.to_vec(),
        owner: Vec::new(),
        ttl: TtlState {
            ttl: default_ttl,
            by_directive: false,
        },
    };
    p.parse_text(text.as_bytes(), &mut st, 0)
        .map_err(|e| e.message)?;
    let mut records = p.out.records;
    match records.len() {
        1 => Ok(records.remove(0)),
        0 => Err("no record".into()),
        _ => Err("more than one record".into()),
    }
}

fn check_origin(origin: &[u8]) -> Result<(), &'static str> {
    ringdns_wire::Name::from_wire(origin)
        .map(|_| ())
        .map_err(|_| "the origin is no valid absolute wire name")
}

fn parse_bytes(src: &[u8], origin: &[u8], file: &Path) -> Result<Parsed, ParseError> {
    let err = |message: String| ParseError {
        file: file.to_path_buf(),
        line: 1,
        message,
    };
    check_origin(origin).map_err(|e| err(e.into()))?;
    let mut p = Parser {
        out: Parsed {
            // A zone file's records are some 30 to 60 bytes each: one reservation
            // instead of twenty doublings for a large zone.
            records: Vec::with_capacity(src.len() / 48),
            pos: Vec::with_capacity(src.len() / 48),
            files: vec![file.to_path_buf()],
        },
        zone: Some(origin.to_vec()),
        nested: true,
        open: vec![std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf())],
        rdata: Vec::with_capacity(512),
    };
    let mut st = FileState {
        file: 0,
        path: file,
        origin: origin.to_vec(),
        owner: Vec::new(),
        ttl: TtlState {
            ttl: DEFAULT_TTL,
            by_directive: false,
        },
    };
    p.parse_text(src, &mut st, 0)?;
    Ok(p.out)
}

/// miekg's default TTL (its `NewRR`'s, and `$GENERATE`'s whatever `$TTL` says).
const DEFAULT_TTL: u32 = 3600;

/// miekg's `maxIncludeDepth`.
const MAX_INCLUDE_DEPTH: u8 = 7;

/// The TTL a record without one gets, as miekg keeps it: the last explicit TTL
/// unless a `$TTL` set it, which then holds until the next `$TTL`.
#[derive(Clone, Copy)]
struct TtlState {
    ttl: u32,
    by_directive: bool,
}

/// What one file (or one `$GENERATE`) reads with: an included file starts from
/// its includer's origin and TTL, and nothing it changes goes back.
struct FileState<'f> {
    file: u16,
    path: &'f Path,
    origin: Vec<u8>,
    /// The last owner, for entries whose line starts with a blank; empty if none.
    owner: Vec<u8>,
    ttl: TtlState,
}

impl FileState<'_> {
    fn err(&self, line: u32, message: impl Into<String>) -> ParseError {
        ParseError {
            file: self.path.to_path_buf(),
            line,
            message: message.into(),
        }
    }
}

struct Parser {
    out: Parsed,
    /// The owners must be at or below this name (not for `parse_rr`).
    zone: Option<Vec<u8>>,
    /// `$INCLUDE` and `$GENERATE` are allowed (not for `parse_rr`).
    nested: bool,
    /// Canonical paths of the files being read, outermost first: `$INCLUDE` loops.
    open: Vec<PathBuf>,
    rdata: Vec<u8>,
}

/// A token for a message: lossy UTF-8, at most 80 characters.
/// The one argument of a `$ORIGIN` or `$TTL` line: `{directive} needs {what}` when there
/// is none.
fn only_arg<'t>(
    st: &FileState<'_>,
    line: u32,
    toks: &'t [Token<'t>],
    directive: &str,
    what: &str,
) -> Result<&'t Token<'t>, ParseError> {
    let t = toks
        .get(1)
        .ok_or_else(|| st.err(line, format!("{directive} needs {what}")))?;
    if let Some(extra) = toks.get(2) {
        return Err(st.err(
            line,
            format!("garbage after {directive}: \"{}\"", show(extra.text)),
        ));
    }
    Ok(t)
}

fn show(tok: &[u8]) -> String {
    let s = String::from_utf8_lossy(tok);
    if s.chars().count() > 80 {
        let cut: String = s.chars().take(77).collect();
        format!("{cut}...")
    } else {
        s.into_owned()
    }
}

impl Parser {
    fn parse_text(
        &mut self,
        src: &[u8],
        st: &mut FileState<'_>,
        depth: u8,
    ) -> Result<(), ParseError> {
        let mut lx = Lexer::new(src);
        let mut toks: Vec<Token<'_>> = Vec::with_capacity(16);
        while let Some(h) = lx
            .next_entry(&mut toks)
            .map_err(|(line, msg)| st.err(line, msg))?
        {
            let first = toks[0];
            if !h.blank && !first.quoted && first.text.first() == Some(&b'$') {
                self.directive(st, h.line, &toks, depth)?;
            } else {
                self.record(st, h.line, h.blank, &toks)
                    .map_err(|m| st.err(h.line, m))?;
            }
        }
        Ok(())
    }

    fn directive(
        &mut self,
        st: &mut FileState<'_>,
        line: u32,
        toks: &[Token<'_>],
        depth: u8,
    ) -> Result<(), ParseError> {
        let d = toks[0].text;
        if d.eq_ignore_ascii_case(b"$ORIGIN") {
            let t = only_arg(st, line, toks, "$ORIGIN", "a name")?;
            let mut o = Vec::with_capacity(t.text.len() + st.origin.len() + 1);
            name::to_wire(t.text, &st.origin, &mut o)
                .map_err(|e| st.err(line, format!("bad $ORIGIN name \"{}\": {e}", show(t.text))))?;
            st.origin = o;
        } else if d.eq_ignore_ascii_case(b"$TTL") {
            let t = only_arg(st, line, toks, "$TTL", "a TTL")?;
            let v = ttl::parse(t.text)
                .ok_or_else(|| st.err(line, format!("bad TTL \"{}\"", show(t.text))))?;
            st.ttl = TtlState {
                ttl: v,
                by_directive: true,
            };
        } else if d.eq_ignore_ascii_case(b"$INCLUDE") {
            if !self.nested {
                return Err(st.err(line, "$INCLUDE is not allowed here"));
            }
            self.include(st, line, toks, depth)?;
        } else if d.eq_ignore_ascii_case(b"$GENERATE") {
            if !self.nested {
                return Err(st.err(line, "$GENERATE is not allowed here"));
            }
            self.generate(st, line, toks)?;
        } else {
            return Err(st.err(line, format!("unknown directive \"{}\"", show(d))));
        }
        Ok(())
    }

    fn include(
        &mut self,
        st: &mut FileState<'_>,
        line: u32,
        toks: &[Token<'_>],
        depth: u8,
    ) -> Result<(), ParseError> {
        use std::os::unix::ffi::OsStrExt;
        let t = toks
            .get(1)
            .ok_or_else(|| st.err(line, "$INCLUDE needs a file name"))?;
        if toks.len() > 3 {
            return Err(st.err(
                line,
                format!("garbage after $INCLUDE: \"{}\"", show(toks[3].text)),
            ));
        }
        let origin = match toks.get(2) {
            Some(o) => {
                let mut v = Vec::new();
                name::to_wire(o.text, &st.origin, &mut v).map_err(|e| {
                    st.err(
                        line,
                        format!("bad $INCLUDE origin \"{}\": {e}", show(o.text)),
                    )
                })?;
                v
            }
            None => st.origin.clone(),
        };
        if depth >= MAX_INCLUDE_DEPTH {
            return Err(st.err(line, "too deeply nested $INCLUDE"));
        }
        let mut raw = Vec::with_capacity(t.text.len());
        scan::octets(t.text, |b| raw.push(b))
            .map_err(|e| st.err(line, format!("bad $INCLUDE file name: {e}")))?;
        let written = Path::new(std::ffi::OsStr::from_bytes(&raw));
        // Relative to the including file's directory, as miekg joins it.
        let path = if written.is_absolute() {
            written.to_path_buf()
        } else {
            st.path.parent().unwrap_or(Path::new("")).join(written)
        };
        let src = std::fs::read(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                st.err(
                    line,
                    format!("$INCLUDE: no such file \"{}\"", written.display()),
                )
            } else {
                st.err(
                    line,
                    format!("$INCLUDE: cannot read \"{}\": {e}", written.display()),
                )
            }
        })?;
        let canon = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if self.open.contains(&canon) {
            return Err(st.err(
                line,
                format!(
                    "$INCLUDE loop: \"{}\" is already being read",
                    written.display()
                ),
            ));
        }
        let file = match self.out.files.iter().position(|f| *f == path) {
            Some(i) => i,
            None => {
                self.out.files.push(path.clone());
                self.out.files.len() - 1
            }
        };
        let file = u16::try_from(file).map_err(|_| st.err(line, "too many $INCLUDE files"))?;
        let mut sub = FileState {
            file,
            path: &path,
            origin,
            owner: Vec::new(),
            ttl: st.ttl,
        };
        self.open.push(canon);
        let r = self.parse_text(&src, &mut sub, depth + 1);
        self.open.pop();
        r
    }

    fn generate(
        &mut self,
        st: &mut FileState<'_>,
        line: u32,
        toks: &[Token<'_>],
    ) -> Result<(), ParseError> {
        let r = toks
            .get(1)
            .ok_or_else(|| st.err(line, "$GENERATE needs a range, an owner, a type and RDATA"))?;
        let range = generate::Range::parse(r.text)
            .map_err(|e| st.err(line, format!("{e}: \"{}\"", show(r.text))))?;
        if toks.len() < 4 {
            return Err(st.err(line, "$GENERATE needs a range, an owner, a type and RDATA"));
        }
        let tpl = generate::template(&toks[2..]);
        // miekg reads the expansions with a parser of their own: the origin is the
        // current one, the default TTL its 3600 whatever $TTL says, and neither the
        // last owner nor the last TTL of the file changes.
        let mut sub = FileState {
            file: st.file,
            path: st.path,
            origin: st.origin.clone(),
            owner: Vec::new(),
            ttl: TtlState {
                ttl: DEFAULT_TTL,
                by_directive: false,
            },
        };
        let mut text = Vec::with_capacity(tpl.len() + 16);
        for cur in range.values() {
            generate::expand(&tpl, cur, range, &mut text).map_err(|e| st.err(line, e))?;
            let mut lx = Lexer::new(&text);
            let mut gt: Vec<Token<'_>> = Vec::with_capacity(toks.len());
            while let Some(h) = lx
                .next_entry(&mut gt)
                .map_err(|(_, m)| st.err(line, format!("$GENERATE: {m}")))?
            {
                if h.blank || (!gt[0].quoted && gt[0].text.first() == Some(&b'$')) {
                    return Err(st.err(
                        line,
                        format!("$GENERATE: no owner name in \"{}\"", show(&text)),
                    ));
                }
                self.record(&mut sub, line, false, &gt)
                    .map_err(|m| st.err(line, format!("$GENERATE: {m}")))?;
            }
        }
        Ok(())
    }

    /// Reads one record entry: `[owner] [ttl] [class] type rdata` with TTL and
    /// class in either order.
    fn record(
        &mut self,
        st: &mut FileState<'_>,
        line: u32,
        blank: bool,
        toks: &[Token<'_>],
    ) -> Result<(), String> {
        let mut i = 0;
        if blank {
            if st.owner.is_empty() {
                return Err("no owner name: the first record has a blank owner".into());
            }
        } else {
            let t = toks[0];
            if t.quoted {
                return Err(format!("bad owner name \"{}\"", show(t.text)));
            }
            name::to_wire(t.text, &st.origin, &mut st.owner).map_err(|e| {
                st.owner.clear();
                format!("bad owner name \"{}\": {e}", show(t.text))
            })?;
            i = 1;
        }
        let mut ttl = None;
        let mut class = None;
        let rtype = loop {
            let Some(t) = toks.get(i) else {
                return Err("missing RR type".into());
            };
            i += 1;
            let txt = t.text;
            if t.quoted {
                return Err(format!("unknown RR type \"{}\"", show(txt)));
            }
            if txt[0].is_ascii_digit() {
                if ttl.is_some() {
                    return Err(format!("unknown RR type \"{}\"", show(txt)));
                }
                ttl = Some(ttl::parse(txt).ok_or_else(|| format!("bad TTL \"{}\"", show(txt)))?);
            } else if let Some(c) = mnemonic::class_from(txt) {
                if class.is_some() {
                    return Err(format!("unknown RR type \"{}\"", show(txt)));
                }
                class = Some(c);
            } else if let Some(r) = mnemonic::rtype_from(txt) {
                break r;
            } else if txt.len() > 5 && txt[..5].eq_ignore_ascii_case(b"CLASS") {
                return Err(format!("unknown class \"{}\"", show(txt)));
            } else {
                return Err(format!("unknown RR type \"{}\"", show(txt)));
            }
        };
        if mnemonic::is_meta(rtype) {
            return Err(format!(
                "RR type {} cannot be in a zone",
                mnemonic::rtype_name(rtype)
            ));
        }
        let ttl = match ttl {
            Some(v) => {
                if !st.ttl.by_directive {
                    st.ttl.ttl = v;
                }
                v
            }
            None => st.ttl.ttl,
        };
        let rd = &toks[i..];
        rdata::encode(rtype, rd, &st.origin, &mut self.rdata).map_err(|e| {
            let tn = mnemonic::rtype_name(rtype);
            match (e.tok.and_then(|j| rd.get(j)), e.msg.is_empty()) {
                (Some(t), true) => format!("bad {tn} record \"{}\"", show(t.text)),
                (Some(t), false) => format!("bad {tn} record \"{}\": {}", show(t.text), e.msg),
                (None, _) => format!("bad {tn} record: {}", e.msg),
            }
        })?;
        if let Some(zone) = &self.zone {
            let in_zone =
                ringdns_wire::Name::from_wire(&st.owner).is_ok_and(|n| n.is_subdomain_of(zone));
            if !in_zone {
                return Err(format!("out of zone data \"{}\"", name::display(&st.owner)));
            }
        }
        self.out.records.push(Record {
            owner: st.owner.as_slice().into(),
            rtype,
            class: class.unwrap_or(ringdns_wire::class::IN),
            ttl,
            rdata: self.rdata.as_slice().into(),
        });
        self.out.pos.push(Pos {
            file: st.file,
            line,
        });
        Ok(())
    }
}
