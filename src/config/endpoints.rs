//! The HTTP endpoints of a configuration: what its blocks' plugins registered in setup
//! (`BlockSetup::http_endpoint`), each (address, path) once.

use super::Block;
use crate::corefile::{Error, Token};
use crate::plugin::HttpEndpoint;

/// Every block's endpoints in Corefile order. Blocks that register the same (address,
/// path) from the same plugin (two blocks with `health :8080`) share the first; the same
/// one from two plugins is an error at the later block's first key.
pub fn gather(blocks: &[Block], first_keys: &[&Token]) -> Result<Vec<HttpEndpoint>, Error> {
    let mut out: Vec<HttpEndpoint> = Vec::new();
    for (b, key) in blocks.iter().zip(first_keys) {
        for e in &b.setup.http {
            match out.iter().find(|o| o.addr == e.addr && o.path == e.path) {
                None => out.push(e.clone()),
                Some(o) if o.plugin == e.plugin => {}
                Some(o) => {
                    return Err(Error {
                        file: key.file.clone(),
                        line: key.line,
                        message: format!(
                            "plugin/{}: http://{}{} is already served by plugin/{}",
                            e.plugin, e.addr, e.path, o.plugin
                        ),
                    });
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::{BlockSetup, HttpResponse};

    fn block(regs: &[(&str, &str, &'static str)]) -> Block {
        let mut setup = BlockSetup::default();
        for &(addr, path, plugin) in regs {
            setup.http_endpoint(addr.parse().unwrap(), path, |_| HttpResponse::text(200, ""));
            setup.http.last_mut().unwrap().plugin = plugin;
        }
        Block {
            zones: Vec::new(),
            setup,
            plugins: Default::default(),
        }
    }

    fn key(line: usize) -> Token {
        Token {
            text: "a.test".into(),
            file: "Corefile".into(),
            line,
        }
    }

    #[test]
    fn one_plugin_shares_a_path_and_two_plugins_clash() {
        let (k1, k2) = (key(1), key(5));
        let blocks = [
            block(&[("127.0.0.1:80", "/x", "one"), ("127.0.0.1:80", "/y", "two")]),
            block(&[("127.0.0.1:80", "/x", "one"), ("127.0.0.1:81", "/x", "two")]),
        ];
        let all = gather(&blocks, &[&k1, &k2]).unwrap();
        let got: Vec<(u16, &str)> = all
            .iter()
            .map(|e| (e.addr.port(), e.path.as_str()))
            .collect();
        assert_eq!(got, vec![(80, "/x"), (80, "/y"), (81, "/x")]);
        let blocks = [
            block(&[("127.0.0.1:80", "/x", "one")]),
            block(&[("127.0.0.1:80", "/x", "two")]),
        ];
        let e = gather(&blocks, &[&k1, &k2]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Corefile:5 - plugin/two: http://127.0.0.1:80/x is already served by plugin/one"
        );
    }
}
