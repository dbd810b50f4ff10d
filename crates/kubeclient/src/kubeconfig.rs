//! `kubeconfig FILE [CONTEXT]`: the context (CONTEXT or current-context), its cluster and
//! its user, read with yaml-rust2. Only what a bearer-token or client-certificate user
//! needs is supported; anything else that would change how we connect (exec and
//! auth-provider plugins, a proxy) is refused by name rather than ignored.

use crate::config::{ApiConfig, Auth};
use crate::tls::TlsInputs;
use base64::Engine;
use std::path::{Path, PathBuf};
use yaml_rust2::{Yaml, YamlLoader};

/// Reads `path` and builds the configuration of `context` (or the current one).
pub(crate) fn config(path: &Path, context: Option<&str>) -> Result<ApiConfig, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("unable to read kubeconfig {}: {e}", path.display()))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let sel =
        select(&text, dir, context).map_err(|e| format!("kubeconfig {}: {e}", path.display()))?;
    ApiConfig::build(
        &sel.server,
        Some(sel.tls),
        sel.server_name.as_deref(),
        sel.auth,
    )
}

/// What a kubeconfig says for one context.
pub(crate) struct Selected {
    /// The cluster's `server` URL.
    pub(crate) server: String,
    /// The cluster's `tls-server-name`.
    pub(crate) server_name: Option<String>,
    /// The cluster's CA and `insecure-skip-tls-verify`, the user's client certificate.
    pub(crate) tls: TlsInputs,
    /// The user's credentials.
    pub(crate) auth: Auth,
}

fn named<'a>(doc: &'a Yaml, list: &str, name: &str, inner: &str) -> Option<&'a Yaml> {
    doc[list]
        .as_vec()?
        .iter()
        .find(|e| e["name"].as_str() == Some(name))
        .map(|e| &e[inner])
}

fn str_field<'a>(y: &'a Yaml, key: &str) -> Option<&'a str> {
    y[key].as_str().filter(|s| !s.is_empty())
}

/// A file field, or its `-data` twin (base64); the `-data` one wins, as in client-go.
fn file_or_data(y: &Yaml, key: &str, dir: &Path) -> Result<Option<Vec<u8>>, String> {
    if let Some(d) = str_field(y, &format!("{key}-data")) {
        let b = base64::engine::general_purpose::STANDARD
            .decode(d.trim())
            .map_err(|e| format!("{key}-data: {e}"))?;
        return Ok(Some(b));
    }
    match str_field(y, key) {
        Some(p) => {
            let p = resolve(dir, p);
            std::fs::read(&p)
                .map(Some)
                .map_err(|e| format!("unable to read {key} {}: {e}", p.display()))
        }
        None => Ok(None),
    }
}

fn resolve(dir: &Path, p: &str) -> PathBuf {
    let p = Path::new(p);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        dir.join(p)
    }
}

/// Picks the context and gathers its cluster and user; relative paths against `dir`.
pub(crate) fn select(text: &str, dir: &Path, context: Option<&str>) -> Result<Selected, String> {
    let docs = YamlLoader::load_from_str(text).map_err(|e| format!("invalid YAML: {e}"))?;
    let doc = docs.first().ok_or("empty file")?;
    let ctx_name = match context.filter(|c| !c.is_empty()) {
        Some(c) => c.to_string(),
        None => str_field(doc, "current-context")
            .ok_or("no context given and no current-context set")?
            .to_string(),
    };
    let ctx = named(doc, "contexts", &ctx_name, "context")
        .filter(|c| !c.is_badvalue())
        .ok_or_else(|| format!("context was not found for specified context: {ctx_name}"))?;
    let cluster_name =
        str_field(ctx, "cluster").ok_or_else(|| format!("context {ctx_name:?} has no cluster"))?;
    let cluster = named(doc, "clusters", cluster_name, "cluster")
        .filter(|c| !c.is_badvalue())
        .ok_or_else(|| format!("cluster {cluster_name:?} of context {ctx_name:?} not found"))?;
    let server = str_field(cluster, "server")
        .ok_or_else(|| format!("cluster {cluster_name:?} has no server"))?
        .to_string();
    if str_field(cluster, "proxy-url").is_some() {
        return Err(format!(
            "cluster {cluster_name:?}: proxy-url is not supported"
        ));
    }
    let insecure = cluster["insecure-skip-tls-verify"]
        .as_bool()
        .unwrap_or(false);
    let ca_pem = file_or_data(cluster, "certificate-authority", dir)?;
    if insecure && ca_pem.is_some() {
        // client-go's validation says the same.
        return Err(
            "specifying a root certificates file with the insecure flag is not allowed".into(),
        );
    }
    let mut tls = TlsInputs {
        ca_pem,
        insecure,
        client: None,
    };
    let mut auth = Auth::None;
    if let Some(user_name) = str_field(ctx, "user") {
        let user = named(doc, "users", user_name, "user")
            .filter(|u| !u.is_badvalue())
            .ok_or_else(|| format!("user {user_name:?} of context {ctx_name:?} not found"))?;
        for unsupported in ["exec", "auth-provider"] {
            if !user[unsupported].is_badvalue() && !user[unsupported].is_null() {
                return Err(format!(
                    "user {user_name:?}: {unsupported} credentials are not supported; use a token, tokenFile or client certificate"
                ));
            }
        }
        let cert = file_or_data(user, "client-certificate", dir)?;
        let key = file_or_data(user, "client-key", dir)?;
        tls.client = match (cert, key) {
            (Some(c), Some(k)) => Some((c, k)),
            (None, None) => None,
            _ => {
                return Err(format!(
                    "user {user_name:?}: client-certificate and client-key must both be set"
                ));
            }
        };
        auth = if let Some(t) = str_field(user, "token") {
            Auth::Token(t.to_string())
        } else if let Some(f) = str_field(user, "tokenFile") {
            Auth::TokenFile(resolve(dir, f))
        } else if let Some(u) = str_field(user, "username") {
            let p = str_field(user, "password").unwrap_or("");
            Auth::Basic(base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}")))
        } else {
            Auth::None
        };
    }
    Ok(Selected {
        server,
        server_name: str_field(cluster, "tls-server-name").map(str::to_string),
        tls,
        auth,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority: certs/ca.pem
    tls-server-name: kubernetes.default.svc
- name: prod-cluster
  cluster:
    server: https://[::1]:443
    certificate-authority-data: QUJD
- name: lab
  cluster:
    server: http://127.0.0.1:8001
    insecure-skip-tls-verify: true
contexts:
- name: dev
  context: {cluster: dev-cluster, user: dev-user, namespace: kube-system}
- name: prod
  context: {cluster: prod-cluster, user: prod-user}
- name: lab
  context: {cluster: lab, user: lab-user}
- name: gke
  context: {cluster: lab, user: gke-user}
- name: eks
  context: {cluster: lab, user: eks-user}
- name: broken
  context: {cluster: nowhere, user: dev-user}
users:
- name: dev-user
  user:
    tokenFile: secrets/token
- name: prod-user
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
    token: abc
- name: lab-user
  user: {username: admin, password: s3cret}
- name: gke-user
  user:
    auth-provider: {name: gcp}
- name: eks-user
  user:
    exec: {command: aws}
"#;

    #[test]
    fn current_context_and_relative_paths() {
        let tmp = ringdns_testkit::TempDir::new("kc-kubeconfig");
        let dir = tmp.path();
        std::fs::create_dir_all(dir.join("certs")).unwrap();
        std::fs::write(dir.join("certs/ca.pem"), "CAPEM").unwrap();
        let s = select(FILE, dir, None).unwrap();
        assert_eq!(s.server, "https://127.0.0.1:6443");
        assert_eq!(s.server_name.as_deref(), Some("kubernetes.default.svc"));
        assert_eq!(s.tls.ca_pem.as_deref(), Some(&b"CAPEM"[..]));
        assert_eq!(s.auth, Auth::TokenFile(dir.join("secrets/token")));
        std::fs::remove_dir_all(dir).unwrap();
        // The CA file is gone: its path is named.
        let e = select(FILE, dir, None).err().unwrap();
        assert!(e.contains("certs/ca.pem"), "{e}");
    }

    #[test]
    fn context_argument_and_data_fields() {
        let s = select(FILE, Path::new("/nonexistent"), Some("prod")).unwrap();
        assert_eq!(s.server, "https://[::1]:443");
        assert_eq!(s.tls.ca_pem.as_deref(), Some(&b"ABC"[..]));
        assert_eq!(s.tls.client, Some((b"CERT".to_vec(), b"KEY".to_vec())));
        assert_eq!(s.auth, Auth::Token("abc".into()));
        let s = select(FILE, Path::new("/"), Some("lab")).unwrap();
        assert!(s.tls.insecure);
        assert_eq!(s.auth, Auth::Basic("YWRtaW46czNjcmV0".into()));
    }

    #[test]
    fn errors_name_what_is_wrong() {
        let e = |ctx| select(FILE, Path::new("/"), Some(ctx)).err().unwrap();
        assert_eq!(
            e("nope"),
            "context was not found for specified context: nope"
        );
        assert!(e("gke").contains("auth-provider"));
        assert!(e("eks").contains("exec"));
        assert!(e("broken").contains("nowhere"));
        let no_current = FILE.replace("current-context: dev\n", "");
        assert!(
            select(&no_current, Path::new("/"), None)
                .err()
                .unwrap()
                .contains("current-context")
        );
        let both = FILE.replace(
            "    insecure-skip-tls-verify: true",
            "    insecure-skip-tls-verify: true\n    certificate-authority-data: QUJD",
        );
        assert!(
            select(&both, Path::new("/"), Some("lab"))
                .err()
                .unwrap()
                .contains("insecure")
        );
        let half = FILE.replace("    client-key-data: S0VZ\n", "");
        assert!(
            select(&half, Path::new("/"), Some("prod"))
                .err()
                .unwrap()
                .contains("client-key")
        );
        let proxy = FILE.replace(
            "    server: http://127.0.0.1:8001",
            "    server: http://127.0.0.1:8001\n    proxy-url: http://p:3128",
        );
        assert!(
            select(&proxy, Path::new("/"), Some("lab"))
                .err()
                .unwrap()
                .contains("proxy-url")
        );
        assert!(
            select("a: [", Path::new("/"), None)
                .err()
                .unwrap()
                .contains("YAML")
        );
        assert!(select("", Path::new("/"), None).is_err());
    }
}
