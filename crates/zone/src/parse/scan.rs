//! domain's [`Scanner`] over one entry's RDATA tokens, so that domain's rdata types
//! read every type it knows from presentation format while names complete with
//! this parser's current `$ORIGIN` and character strings follow miekg's rules.

use std::borrow::Cow;
use std::fmt;

use domain::base::charstr::CharStr;
use domain::base::name::Name;
use domain::base::scan::{ConvertSymbols, EntrySymbol, Scanner, ScannerError, Symbol};
use domain::dep::octseq::str::Str;

use super::lex::Token;
use super::name;

/// A scanning error; which token it is about is the scanner's `idx`.
#[derive(Debug)]
pub(crate) struct ScanError(pub Cow<'static, str>);

impl fmt::Display for ScanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ScanError {}

impl ScannerError for ScanError {
    fn custom(msg: &'static str) -> Self {
        ScanError(Cow::Borrowed(msg))
    }
    fn end_of_entry() -> Self {
        ScanError(Cow::Borrowed("missing data"))
    }
    fn short_buf() -> Self {
        ScanError(Cow::Borrowed("data too long"))
    }
    fn trailing_tokens() -> Self {
        ScanError(Cow::Borrowed("trailing data"))
    }
}

impl From<&'static str> for ScanError {
    fn from(s: &'static str) -> Self {
        ScanError(Cow::Borrowed(s))
    }
}

/// Calls `f` with each octet a token stands for: `\DDD` and `\X` undone, every
/// other byte as written (miekg keeps raw UTF-8 in character strings too).
pub(crate) fn octets(tok: &[u8], mut f: impl FnMut(u8)) -> Result<(), ScanError> {
    let mut i = 0;
    while i < tok.len() {
        if tok[i] == b'\\' {
            let (b, n) = name::unescape(&tok[i..])?;
            f(b);
            i += n;
        } else {
            f(tok[i]);
            i += 1;
        }
    }
    Ok(())
}

/// Calls `f` with each symbol of a token (escapes classified, UTF-8 decoded).
fn symbols(
    tok: &[u8],
    mut f: impl FnMut(Symbol) -> Result<(), ScanError>,
) -> Result<(), ScanError> {
    let mut pos = 0;
    loop {
        match Symbol::from_slice_index(tok, pos) {
            Ok(Some((sym, next))) => {
                f(sym)?;
                pos = next;
            }
            Ok(None) => return Ok(()),
            Err(e) => return Err(ScanError(Cow::Borrowed(e.as_str()))),
        }
    }
}

/// Appends `tok` as character strings of at most 255 octets each (miekg splits a
/// longer TXT string rather than refusing it).
pub(crate) fn push_charstrs(tok: &[u8], out: &mut Vec<u8>) -> Result<(), ScanError> {
    let mut len_at = out.len();
    out.push(0);
    octets(tok, |b| {
        if out.len() - len_at - 1 == 255 {
            out[len_at] = 255;
            len_at = out.len();
            out.push(0);
        }
        out.push(b);
    })?;
    out[len_at] = (out.len() - len_at - 1) as u8;
    Ok(())
}

/// The scanner over the tokens `toks` of one entry's RDATA.
pub(crate) struct TokScanner<'t, 'a> {
    toks: &'t [Token<'a>],
    /// The next token to read: after an error, the one past the token at fault.
    pub idx: usize,
    /// A read found no token left: an error then is about no token.
    pub ran_out: bool,
    origin: &'t [u8],
}

impl<'t, 'a> TokScanner<'t, 'a> {
    pub fn new(toks: &'t [Token<'a>], origin: &'t [u8]) -> Self {
        TokScanner {
            toks,
            idx: 0,
            ran_out: false,
            origin,
        }
    }

    fn next_tok(&mut self) -> Result<Token<'a>, ScanError> {
        let Some(&t) = self.toks.get(self.idx) else {
            self.ran_out = true;
            return Err(ScanError::end_of_entry());
        };
        self.idx += 1;
        Ok(t)
    }

    fn octet_vec(&mut self) -> Result<Vec<u8>, ScanError> {
        let t = self.next_tok()?;
        let mut v = Vec::with_capacity(t.text.len());
        octets(t.text, |b| v.push(b))?;
        Ok(v)
    }
}

impl Scanner for TokScanner<'_, '_> {
    type Octets = Vec<u8>;
    type OctetsBuilder = Vec<u8>;
    type Name = Name<Vec<u8>>;
    type Error = ScanError;

    fn has_space(&self) -> bool {
        self.toks.get(self.idx).is_none_or(|t| t.space)
    }

    fn continues(&mut self) -> bool {
        self.idx < self.toks.len()
    }

    fn scan_symbols<F>(&mut self, op: F) -> Result<(), Self::Error>
    where
        F: FnMut(Symbol) -> Result<(), Self::Error>,
    {
        let t = self.next_tok()?;
        symbols(t.text, op)
    }

    fn scan_entry_symbols<F>(&mut self, mut op: F) -> Result<(), Self::Error>
    where
        F: FnMut(EntrySymbol) -> Result<(), Self::Error>,
    {
        while self.idx < self.toks.len() {
            let t = self.next_tok()?;
            symbols(t.text, |s| op(EntrySymbol::Symbol(s)))?;
            op(EntrySymbol::EndOfToken)?;
        }
        Ok(())
    }

    fn convert_token<C: ConvertSymbols<Symbol, Self::Error>>(
        &mut self,
        mut convert: C,
    ) -> Result<Self::Octets, Self::Error> {
        let t = self.next_tok()?;
        let mut res = Vec::new();
        symbols(t.text, |s| {
            if let Some(d) = convert.process_symbol(s)? {
                res.extend_from_slice(d);
            }
            Ok(())
        })?;
        if let Some(d) = convert.process_tail()? {
            res.extend_from_slice(d);
        }
        Ok(res)
    }

    fn convert_entry<C: ConvertSymbols<EntrySymbol, Self::Error>>(
        &mut self,
        mut convert: C,
    ) -> Result<Self::Octets, Self::Error> {
        let mut res = Vec::new();
        while self.idx < self.toks.len() {
            let t = self.next_tok()?;
            symbols(t.text, |s| {
                if let Some(d) = convert.process_symbol(EntrySymbol::Symbol(s))? {
                    res.extend_from_slice(d);
                }
                Ok(())
            })?;
        }
        if let Some(d) = convert.process_tail()? {
            res.extend_from_slice(d);
        }
        Ok(res)
    }

    fn scan_octets(&mut self) -> Result<Self::Octets, Self::Error> {
        self.octet_vec()
    }

    fn scan_svcb_octets(&mut self) -> Result<Self::Octets, Self::Error> {
        // `key="quoted value"` is two tokens, `key=` and the quoted one, with no
        // blank between them: glue them back (as domain's own zone scanner does).
        let mut v = self.octet_vec()?;
        if let Some(t) = self.toks.get(self.idx)
            && t.quoted
            && !t.space
        {
            self.idx += 1;
            octets(t.text, |b| v.push(b))?;
        }
        Ok(v)
    }

    fn scan_ascii_str<F, T>(&mut self, op: F) -> Result<T, Self::Error>
    where
        F: FnOnce(&str) -> Result<T, Self::Error>,
    {
        let t = self.next_tok()?;
        if !t.text.contains(&b'\\') {
            if let Ok(s) = std::str::from_utf8(t.text)
                && s.is_ascii()
            {
                return op(s);
            }
            return Err("non-ASCII characters".into());
        }
        let mut s = String::with_capacity(t.text.len());
        symbols(t.text, |sym| {
            let b = sym.into_ascii().map_err(|e| ScanError(e.as_str().into()))?;
            s.push(char::from(b));
            Ok(())
        })?;
        op(&s)
    }

    fn scan_name(&mut self) -> Result<Self::Name, Self::Error> {
        let t = self.next_tok()?;
        let mut v = Vec::with_capacity(t.text.len() + self.origin.len() + 1);
        name::to_wire(t.text, self.origin, &mut v)?;
        Name::from_octets(v).map_err(|_| "bad domain name".into())
    }

    fn scan_charstr(&mut self) -> Result<CharStr<Self::Octets>, Self::Error> {
        let v = self.octet_vec()?;
        CharStr::from_octets(v).map_err(|_| "character string longer than 255 octets".into())
    }

    fn scan_string(&mut self) -> Result<Str<Self::Octets>, Self::Error> {
        let t = self.next_tok()?;
        let mut s = String::with_capacity(t.text.len());
        symbols(t.text, |sym| {
            s.push(sym.into_char().map_err(|e| ScanError(e.as_str().into()))?);
            Ok(())
        })?;
        Ok(Str::from_string(s))
    }

    fn scan_charstr_entry(&mut self) -> Result<Self::Octets, Self::Error> {
        let mut v = Vec::new();
        while self.idx < self.toks.len() {
            let t = self.next_tok()?;
            push_charstrs(t.text, &mut v)?;
        }
        Ok(v)
    }

    fn scan_opt_unknown_marker(&mut self) -> Result<bool, Self::Error> {
        match self.toks.get(self.idx) {
            Some(t) if !t.quoted && t.text == b"\\#" => {
                self.idx += 1;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    fn octets_builder(&mut self) -> Result<Self::OctetsBuilder, Self::Error> {
        Ok(Vec::new())
    }
}
