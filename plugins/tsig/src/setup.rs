//! `tsig [ZONES...] { secret NAME KEY [ALG]; secrets FILE; require ...; require_opcode ... }`,
//! as CoreDNS's `plugin/tsig/setup.go` parses it.

use crate::mac::Alg;
use base64::Engine;
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::normalize::origins_from_args_or_block;
use ringdns_plugin::wire::{name_to_wire, type_name};
use ringdns_plugin::{BlockSetup, once_per_block_of};

/// The directive, for errors.
pub const NAME: &str = "tsig";

/// One shared secret: the key's name (lower-case wire form, as compared with a request's),
/// its algorithm and its bytes.
#[derive(Debug)]
pub struct Key {
    /// The key name, lower-case wire form.
    pub name: Vec<u8>,
    /// The one algorithm this key is for (`secret NAME KEY ALG`, a key file's `algorithm`);
    /// `None`: any of the five, as CoreDNS verifies a key with whichever the request names.
    pub alg: Option<Alg>,
    /// The decoded secret.
    pub secret: Vec<u8>,
}

/// What setup parsed.
#[derive(Debug, Default)]
pub struct Config {
    /// The zones whose queries this plugin checks (wire form).
    pub zones: Vec<Vec<u8>>,
    /// Every key of the block.
    pub keys: Vec<Key>,
    /// `require all`.
    pub all_types: bool,
    /// `require QTYPE...`.
    pub types: Vec<u16>,
    /// `require_opcode all`.
    pub all_opcodes: bool,
    /// `require_opcode OPCODE...`.
    pub opcodes: Vec<u8>,
}

impl Config {
    /// The key a request names, by its lower-cased wire name.
    pub fn key(&self, name: &[u8]) -> Option<&Key> {
        self.keys.iter().find(|k| k.name == name)
    }

    /// Whether an unsigned query of this type and opcode is refused.
    pub fn required(&self, qtype: u16, opcode: u8) -> bool {
        self.all_types
            || self.all_opcodes
            || self.types.contains(&qtype)
            || self.opcodes.contains(&opcode)
    }
}

/// miekg's `StringToType` (the mnemonics exactly as `TypeToString` spells them).
fn type_from(s: &str) -> Option<u16> {
    (0..=u16::MAX).find(|t| type_name(*t).as_str() == Some(s))
}

/// miekg's `StringToOpcode`.
fn opcode_from(s: &str) -> Option<u8> {
    match s {
        "QUERY" => Some(0),
        "IQUERY" => Some(1),
        "STATUS" => Some(2),
        "NOTIFY" => Some(4),
        "UPDATE" => Some(5),
        _ => None,
    }
}

/// A key name as CoreDNS normalizes it (`plugin.Name(..).Normalize()`: lower case, FQDN).
fn key_name(s: &str) -> Result<(String, Vec<u8>), String> {
    let mut n = s.to_ascii_lowercase();
    if !n.ends_with('.') {
        n.push('.');
    }
    let w = name_to_wire(&n).map_err(|e| format!("invalid key name '{s}': {e}"))?;
    Ok((n, w))
}

/// Decodes a base64 secret (BIND's and dig's form).
fn secret(name: &str, b64: &str) -> Result<Vec<u8>, String> {
    base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_err(|e| format!("invalid secret for key \"{name}\": {e}"))
}

/// An algorithm name of a Corefile or key file; hmac-md5 and others are errors.
fn alg(s: &str) -> Result<Alg, String> {
    Alg::from_name(s).ok_or_else(|| format!("unsupported algorithm '{s}'"))
}

/// Parses the block's `tsig`.
pub fn parse(d: &mut Dispenser<'_>, block: &BlockSetup) -> Result<Config, Error> {
    let mut c = Config::default();
    let mut seen = false;
    while d.next() {
        once_per_block_of(d, NAME, &mut seen)?;
        let args = d.remaining_args();
        for z in origins_from_args_or_block(NAME, &args, &block.zones) {
            let w = name_to_wire(&z).map_err(|e| d.plugin_err(NAME, e))?;
            c.zones.push(w);
        }
        while d.next_block() {
            let prop = d.val().to_string();
            let args = d.remaining_args();
            match prop.as_str() {
                "secret" => {
                    if args.len() != 2 && args.len() != 3 {
                        return Err(d.plugin_arg_err(NAME));
                    }
                    let (n, w) = key_name(&args[0]).map_err(|e| d.plugin_err(NAME, e))?;
                    let alg = match args.get(2) {
                        Some(a) => Some(crate::setup::alg(a).map_err(|e| d.plugin_err(NAME, e))?),
                        None => None,
                    };
                    let s = secret(&n, &args[1]).map_err(|e| d.plugin_err(NAME, e))?;
                    add(&mut c, n, w, alg, s).map_err(|e| d.plugin_err(NAME, e))?;
                }
                "secrets" => {
                    if args.len() != 1 {
                        return Err(d.plugin_arg_err(NAME));
                    }
                    let path = block.resolve_path(&args[0]);
                    let text = std::fs::read_to_string(&path)
                        .map_err(|e| d.plugin_err(NAME, format!("{}: {e}", path.display())))?;
                    for (n, a, s) in parse_key_file(&text).map_err(|e| d.plugin_err(NAME, e))? {
                        let (n, w) = key_name(&n).map_err(|e| d.plugin_err(NAME, e))?;
                        let s = secret(&n, &s).map_err(|e| d.plugin_err(NAME, e))?;
                        add(&mut c, n, w, a, s).map_err(|e| d.plugin_err(NAME, e))?;
                    }
                }
                "require" | "require_opcode" => {
                    let types = prop == "require";
                    if args.is_empty() {
                        return Err(d.plugin_arg_err(NAME));
                    }
                    if types {
                        c.types.clear();
                        c.all_types = false;
                    } else {
                        c.opcodes.clear();
                        c.all_opcodes = false;
                    }
                    match args[0].as_str() {
                        "all" if types => c.all_types = true,
                        "all" => c.all_opcodes = true,
                        "none" => {}
                        _ => {
                            for a in &args {
                                if types {
                                    let t = type_from(a).ok_or_else(|| {
                                        d.plugin_err(NAME, format!("unknown query type '{a}'"))
                                    })?;
                                    c.types.push(t);
                                } else {
                                    let o = opcode_from(a).ok_or_else(|| {
                                        d.plugin_err(NAME, format!("unknown opcode '{a}'"))
                                    })?;
                                    c.opcodes.push(o);
                                }
                            }
                        }
                    }
                }
                _ => return Err(d.plugin_err(NAME, format!("unknown property '{prop}'"))),
            }
        }
    }
    Ok(c)
}

/// Adds a key, refusing a name defined twice (CoreDNS's `key %q redefined`).
fn add(
    c: &mut Config,
    n: String,
    w: Vec<u8>,
    alg: Option<Alg>,
    secret: Vec<u8>,
) -> Result<(), String> {
    if c.key(&w).is_some() {
        return Err(format!("key \"{n}\" redefined"));
    }
    c.keys.push(Key {
        name: w,
        alg,
        secret,
    });
    Ok(())
}

/// A key file's keys: name, algorithm if it names one, base64 secret.
pub type KeyFile = Vec<(String, Option<Alg>, String)>;

/// A BIND key file as CoreDNS's `parseKeyFile` reads it, line by line: `key "NAME" {`, then
/// `algorithm ALG;` and `secret "BASE64";` lines, then `};`. Unlike CoreDNS, which ignores
/// it, the algorithm binds the key (as in BIND); without one the key takes any. Gives
/// (name, algorithm, secret) triples.
pub fn parse_key_file(text: &str) -> Result<KeyFile, String> {
    let mut out: KeyFile = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.is_empty() {
            continue;
        }
        if f[0] != "key" {
            return Err(format!("unexpected token \"{}\"", f[0]));
        }
        let key = f
            .get(1)
            .map(|k| k.trim_matches(|c| c == '"' || c == '{'))
            .unwrap_or("");
        if key.is_empty() {
            return Err(format!("expected key name \"{line}\""));
        }
        let key = key_name(key)?.0;
        if out.iter().any(|(k, _, _)| *k == key) {
            return Err(format!("key \"{key}\" redefined"));
        }
        let (mut a, mut secret) = (None, None);
        for line in lines.by_ref() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.is_empty() {
                continue;
            }
            match f[0] {
                "algorithm" => {
                    let name = f.get(1).map(|s| s.trim_matches(|c| c == '"' || c == ';'));
                    a = Some(alg(name.unwrap_or(""))?);
                }
                "secret" => {
                    let s = f.get(1).map(|s| s.trim_matches(|c| c == '"' || c == ';'));
                    match s {
                        Some(s) if !s.is_empty() => secret = Some(s.to_string()),
                        _ => return Err(format!("expected secret key \"{line}\"")),
                    }
                }
                "}" | "};" => break,
                t => return Err(format!("unexpected token \"{t}\"")),
            }
        }
        let Some(s) = secret else {
            return Err(format!("expected secret for key \"{key}\""));
        };
        out.push((key, a, s));
    }
    Ok(out)
}
