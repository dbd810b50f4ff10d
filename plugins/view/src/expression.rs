//! One `expr` line: an expr-lang program (CoreDNS's `expr.Compile` with
//! `plugin/pkg/expression`'s environment) and its run over a query.
//!
//! The query's values are the functions CoreDNS's `DefaultEnv` names (`name()`, `type()`,
//! `client_ip()`, `incidr(ip, cidr)`, `metadata(label)`, …). Each reads its value from the
//! [`QueryEnv`] the run is given, computed the first time the program asks for it, so a
//! program that only looks at the type never formats the client's address.

use expr::{Context, ContextProvider, Environment, Program, Value};
use ringdns_plugin::name_text::NameText;
use ringdns_plugin::reverse::Cidr;
use ringdns_plugin::wire::{class_name, type_name};
use ringdns_plugin::{Proto, Request};
use std::cell::OnceCell;
use std::net::{IpAddr, SocketAddr};

/// The functions of CoreDNS's expression environment that read the query, each with the
/// key of its value in [`QueryEnv`].
const QUERY_FUNCTIONS: [&str; 13] = [
    "bufsize",
    "class",
    "client_ip",
    "do",
    "id",
    "name",
    "opcode",
    "port",
    "proto",
    "server_ip",
    "server_port",
    "size",
    "type",
];

/// The functions of CoreDNS's environment that take arguments.
const UTILITY_FUNCTIONS: [&str; 2] = ["incidr", "metadata"];

/// The key under which [`QueryEnv`] offers a metadata label's value; no identifier of an
/// expression can start with it.
const META_PREFIX: &str = "\0meta\0";

/// The environment every expression of every view runs in: expr-lang's built-ins with
/// `type` replaced (CoreDNS disables the built-in) and CoreDNS's functions added.
pub fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    for f in QUERY_FUNCTIONS {
        env.add_function(f, move |c| {
            if !c.args.is_empty() {
                return Err(format!("{f}() takes no arguments").into());
            }
            Ok(c.ctx.get(f).cloned().unwrap_or(Value::Nil))
        });
    }
    env.add_function("incidr", |c| match c.args.as_slice() {
        [Value::String(ip), Value::String(cidr)] => {
            let ip: IpAddr = ip
                .parse()
                .map_err(|_| "first argument is not an IP address".to_string())?;
            let net = parse_cidr(cidr).ok_or_else(|| format!("invalid CIDR address: {cidr}"))?;
            Ok(Value::Bool(net.contains(ip)))
        }
        _ => Err("incidr(ip, cidr) takes two strings".to_string().into()),
    });
    env.add_function("metadata", |c| match c.args.as_slice() {
        [Value::String(label)] => Ok(c
            .ctx
            .get(&format!("{META_PREFIX}{label}"))
            .cloned()
            .unwrap_or_else(|| Value::String(String::new()))),
        _ => Err("metadata(label) takes one string".to_string().into()),
    });
    env
}

/// Go's `net.ParseCIDR` as `incidr` uses it: an address and a prefix length, host bits
/// allowed (they are masked).
fn parse_cidr(text: &str) -> Option<Cidr> {
    let (addr, len) = text.split_once('/')?;
    let addr: IpAddr = addr.parse().ok()?;
    if len.is_empty() || !len.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Cidr::new(addr, len.parse().ok()?)
}

/// A compiled `expr` line.
#[derive(Debug)]
pub struct Expression {
    program: Program,
}

impl Expression {
    /// Compiles `source`; the error says where it is wrong (column, and line for a source
    /// of several), or which function is unknown, as CoreDNS's compile does at start-up.
    pub fn compile(source: &str, env: &Environment<'_>) -> Result<Expression, String> {
        let program = expr::compile(source).map_err(|e| compile_error(source, &e))?;
        if let Some(unknown) = unknown_function(source, env) {
            return Err(unknown);
        }
        Ok(Expression { program })
    }

    /// Whether the query passes: CoreDNS counts anything but a boolean true (an error
    /// included) as false.
    pub fn passes(&self, env: &Environment<'_>, query: &QueryEnv<'_, '_>) -> bool {
        matches!(env.run(&self.program, query), Ok(Value::Bool(true)))
    }
}

/// A compile error on one line: pest's ` --> L:C` and its expectation.
fn compile_error(source: &str, e: &expr::Error) -> String {
    let text = e.to_string();
    let place = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("--> "))
        .and_then(|p| p.split_once(':'));
    let what = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("= "))
        .unwrap_or(text.lines().next().unwrap_or("invalid expression"));
    match place {
        Some((line, col)) if source.contains('\n') => {
            format!("invalid expression '{source}' at line {line}, column {col}: {what}")
        }
        Some((_, col)) => format!("invalid expression '{source}' at column {col}: {what}"),
        None => format!("invalid expression '{source}': {what}"),
    }
}

/// The first call of a function neither CoreDNS's environment nor expr-lang has, with its
/// column: expr-lang finds those only when it runs, CoreDNS's compile at start-up.
fn unknown_function(source: &str, env: &Environment<'_>) -> Option<String> {
    let bytes = source.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\'' || b == b'"' || b == b'`' {
            // A string literal: skip to its closing quote (backslash escapes, not in raw).
            i += 1;
            while i < bytes.len() && bytes[i] != b {
                if bytes[i] == b'\\' && b != b'`' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            continue;
        }
        if b.is_ascii_alphabetic() || b == b'_' || b == b'$' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let ident = &source[start..i];
            let member = start > 0 && bytes[start - 1] == b'.';
            let called = source[i..].trim_start().starts_with('(');
            let ours = QUERY_FUNCTIONS.contains(&ident) || UTILITY_FUNCTIONS.contains(&ident);
            if called && !member && !ours && !is_builtin(env, ident) {
                return Some(format!(
                    "invalid expression '{source}' at column {}: unknown function {ident}",
                    start + 1
                ));
            }
            continue;
        }
        i += 1;
    }
    None
}

/// Whether expr-lang has a function of that name (a call with no arguments fails for
/// another reason than an unknown name).
fn is_builtin(env: &Environment<'_>, ident: &str) -> bool {
    match env.eval_func(&Context::default(), ident, Vec::new(), None) {
        Ok(_) => true,
        Err(e) => !e.to_string().starts_with("Unknown function"),
    }
}

/// What an expression reads of one query, each value made when first asked for.
pub struct QueryEnv<'q, 'r> {
    req: &'q Request<'r>,
    values: [OnceCell<Value>; 13],
    metadata: OnceCell<Vec<(String, Value)>>,
}

impl<'q, 'r> QueryEnv<'q, 'r> {
    /// The values of `req`, none made yet.
    pub fn new(req: &'q Request<'r>) -> Self {
        QueryEnv {
            req,
            values: Default::default(),
            metadata: OnceCell::new(),
        }
    }

    fn value(&self, function: &str) -> Option<Value> {
        let req = self.req;
        let q = &req.query;
        let tcp = req.proto == Proto::Tcp;
        Some(match function {
            "bufsize" => Value::Integer(q.max_reply_size(tcp) as i64),
            "class" => Value::String(class_name(q.qclass()).to_string()),
            "client_ip" => Value::String(ip_text(req.client)),
            "do" => Value::Bool(q.do_bit()),
            "id" => Value::Integer(i64::from(q.id())),
            "name" => Value::String(NameText::of(&q.qname()).as_str().to_string()),
            "opcode" => Value::Integer(i64::from(q.opcode())),
            "port" => Value::String(req.client.port().to_string()),
            "proto" => Value::String(if tcp { "tcp" } else { "udp" }.to_string()),
            "server_ip" => Value::String(ip_text(req.local)),
            "server_port" => Value::String(req.local.port().to_string()),
            "size" => Value::Integer(q.packet().len() as i64),
            "type" => Value::String(type_name(q.qtype()).to_string()),
            _ => return None,
        })
    }
}

/// An address as Go's `net.SplitHostPort` leaves it: no brackets, an IPv4-mapped IPv6
/// address as IPv4.
fn ip_text(addr: SocketAddr) -> String {
    addr.ip().to_canonical().to_string()
}

impl ContextProvider for QueryEnv<'_, '_> {
    fn get(&self, key: &str) -> Option<&Value> {
        if let Some(label) = key.strip_prefix(META_PREFIX) {
            let all = self.metadata.get_or_init(|| {
                let Some(meta) = self.req.metadata() else {
                    return Vec::new();
                };
                meta.labels()
                    .into_iter()
                    .filter_map(|l| {
                        let v = meta.get(&l)?;
                        Some((l, Value::String(v)))
                    })
                    .collect()
            });
            return all.iter().find(|(l, _)| l == label).map(|(_, v)| v);
        }
        let i = QUERY_FUNCTIONS.iter().position(|f| *f == key)?;
        let cell = &self.values[i];
        if cell.get().is_none() {
            let _ = cell.set(self.value(key)?);
        }
        cell.get()
    }

    fn to_context(&self) -> Context {
        let mut ctx = Context::default();
        for f in QUERY_FUNCTIONS {
            if let Some(v) = self.get(f) {
                ctx.insert(f, v.clone());
            }
        }
        ctx
    }
}
