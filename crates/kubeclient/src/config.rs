//! [`ApiConfig`]: where the API server is, how to reach it (TLS) and how to authenticate;
//! built once per plugin instance by one of the three sources CoreDNS has (in-cluster,
//! kubeconfig, `endpoint` + `tls`), and shared by all of that instance's reflectors.

use crate::limiter::Limiter;
use crate::tls::{self, TlsInputs};
use crate::{Limits, Tuning};
use rustls::pki_types::ServerName;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where the API server is and how to authenticate (built once per plugin instance).
pub struct ApiConfig {
    /// `host:port` as in the URL (brackets kept for IPv6): the Host header and metric label.
    pub(crate) host: String,
    /// What to connect to: the host without brackets, and the port.
    pub(crate) connect: (String, u16),
    /// The server URL's path, if any (`https://h/k8s/clusters/x`), without a trailing `/`.
    pub(crate) base_path: String,
    /// `None` for `http://`.
    pub(crate) tls: Option<(Arc<rustls::ClientConfig>, ServerName<'static>)>,
    /// How each request authenticates.
    pub(crate) auth: Auth,
    /// The token bucket and inflight limit every reflector of this configuration shares.
    pub(crate) limiter: Arc<Limiter>,
    /// Timeouts, backoff and page size.
    pub(crate) tuning: Tuning,
}

/// How requests authenticate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Auth {
    /// Nothing (client certificate only, or `kubectl proxy`).
    None,
    /// A fixed bearer token.
    Token(String),
    /// A bearer token read from this file before each request, so a rotated token (the
    /// projected service-account token is renewed hourly) is picked up.
    TokenFile(PathBuf),
    /// kubeconfig's username/password, as `Basic` credentials (already encoded).
    Basic(String),
}

impl Auth {
    /// The Authorization header value for the next request.
    pub(crate) fn header(&self) -> Result<Option<String>, String> {
        match self {
            Auth::None => Ok(None),
            Auth::Token(t) => Ok(Some(format!("Bearer {t}"))),
            Auth::TokenFile(p) => {
                let t = std::fs::read_to_string(p)
                    .map_err(|e| format!("unable to read token file {}: {e}", p.display()))?;
                let t = t.trim();
                if t.is_empty() {
                    return Err(format!("token file {} is empty", p.display()));
                }
                Ok(Some(format!("Bearer {t}")))
            }
            Auth::Basic(b) => Ok(Some(format!("Basic {b}"))),
        }
    }
}

/// The three files of CoreDNS's `tls CERT KEY CACERT`.
pub struct TlsFiles<'a> {
    /// The client certificate (PEM).
    pub cert: &'a Path,
    /// Its private key (PEM).
    pub key: &'a Path,
    /// The CA that signed the API server's certificate (PEM).
    pub ca: &'a Path,
}

/// A server URL split up.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Url {
    /// `https://` (else `http://`).
    pub(crate) https: bool,
    /// `host:port`, brackets kept for IPv6, the port filled in.
    pub(crate) host: String,
    /// The host without brackets, and the port.
    pub(crate) connect: (String, u16),
    /// The path, without a trailing `/`.
    pub(crate) path: String,
}

/// Parses `http(s)://host[:port][/path]`: no user info, query or fragment.
pub(crate) fn parse_url(url: &str) -> Result<Url, String> {
    let bad = |why: &str| format!("invalid API server URL {url:?}: {why}");
    let (https, rest) = if let Some(r) = url.strip_prefix("https://") {
        (true, r)
    } else if let Some(r) = url.strip_prefix("http://") {
        (false, r)
    } else {
        return Err(bad("the scheme must be http or https"));
    };
    if rest.contains(['?', '#']) {
        return Err(bad("no query or fragment allowed"));
    }
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    if authority.contains('@') {
        return Err(bad("no user info allowed"));
    }
    let default_port = if https { 443 } else { 80 };
    let (name, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (addr, after) = v6.split_once(']').ok_or_else(|| bad("unclosed ["))?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().map_err(|_| bad("bad port"))?,
            None if after.is_empty() => default_port,
            None => return Err(bad("junk after ]")),
        };
        (addr.to_string(), port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), p.parse().map_err(|_| bad("bad port"))?),
            None => (authority.to_string(), default_port),
        }
    };
    if name.is_empty() {
        return Err(bad("no host"));
    }
    let host = if name.contains(':') {
        format!("[{name}]:{port}")
    } else {
        format!("{name}:{port}")
    };
    Ok(Url {
        https,
        host,
        connect: (name, port),
        path: path.to_string(),
    })
}

impl ApiConfig {
    /// Puts a configuration together from what a source found.
    pub(crate) fn build(
        url: &str,
        tls_in: Option<TlsInputs>,
        server_name: Option<&str>,
        auth: Auth,
    ) -> Result<ApiConfig, String> {
        let u = parse_url(url)?;
        let tls = if u.https {
            let cfg = tls::client_config(&tls_in.unwrap_or_default())?;
            let name = tls::server_name(server_name.unwrap_or(&u.connect.0))?;
            Some((cfg, name))
        } else {
            None
        };
        Ok(ApiConfig {
            host: u.host,
            connect: u.connect,
            base_path: u.path,
            tls,
            auth,
            limiter: Arc::new(Limiter::new(Limits::default())),
            tuning: Tuning::default(),
        })
    }

    /// In-cluster: KUBERNETES_SERVICE_HOST/PORT, token + ca.crt in
    /// /var/run/secrets/kubernetes.io/serviceaccount (directory overridable by env
    /// `RINGDNS_K8S_SERVICEACCOUNT_DIR`, for tests only); the token file is re-read before
    /// each request, so a rotated token is used.
    pub fn in_cluster() -> Result<ApiConfig, String> {
        crate::incluster::config(&|k| std::env::var(k).ok())
    }

    /// [`ApiConfig::in_cluster`] with the environment read through `env` instead of the
    /// process's: for tests, which cannot set variables of a multi-threaded process safely.
    pub fn in_cluster_with_env(env: &dyn Fn(&str) -> Option<String>) -> Result<ApiConfig, String> {
        crate::incluster::config(env)
    }

    /// `kubeconfig FILE [CONTEXT]`: current-context or CONTEXT, its cluster's server,
    /// certificate-authority(-data), insecure-skip-tls-verify and tls-server-name, its user's
    /// token / tokenFile / client-certificate(-data) / client-key(-data) (or
    /// username/password); relative paths against the file's directory. `exec` and
    /// `auth-provider` users are refused by name, as is `proxy-url`.
    pub fn from_kubeconfig(path: &Path, context: Option<&str>) -> Result<ApiConfig, String> {
        crate::kubeconfig::config(path, context)
    }

    /// `endpoint URL` with an optional `tls CERT KEY CACERT`, as CoreDNS's getClientConfig
    /// builds it: the URL as the cluster's server, the CA (if given) as its
    /// certificate-authority, cert and key as the client's. No token. An https URL without a
    /// CA verifies against the system roots (rustls-native-certs), as Go does.
    pub fn from_endpoint(url: &str, tls: Option<TlsFiles<'_>>) -> Result<ApiConfig, String> {
        let read =
            |p: &Path| std::fs::read(p).map_err(|e| format!("unable to read {}: {e}", p.display()));
        let inputs = match tls {
            Some(f) => Some(TlsInputs {
                ca_pem: Some(read(f.ca)?),
                insecure: false,
                client: Some((read(f.cert)?, read(f.key)?)),
            }),
            None => None,
        };
        ApiConfig::build(url, inputs, None, Auth::None)
    }

    /// `apiserver_qps` / `apiserver_burst` / `apiserver_max_inflight`. As in CoreDNS, a value
    /// of 0 or unset keeps client-go's default (5 QPS, burst 10, no inflight limit). The
    /// token bucket and the semaphore are shared by all reflectors of this config.
    pub fn with_limits(mut self, limits: Limits) -> ApiConfig {
        self.limiter = Arc::new(Limiter::new(limits));
        self
    }

    /// Replaces the timing constants (client-go's by default); for tests that cannot wait
    /// 800 ms for a retry.
    pub fn with_tuning(mut self, tuning: Tuning) -> ApiConfig {
        self.tuning = tuning;
        self
    }

    /// "host:port", for metric labels and logs.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Whether requests go over TLS.
    pub fn is_https(&self) -> bool {
        self.tls.is_some()
    }
}

impl std::fmt::Debug for ApiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let auth = match &self.auth {
            Auth::None => "none".to_string(),
            Auth::Token(_) => "token".to_string(),
            Auth::TokenFile(p) => format!("token file {}", p.display()),
            Auth::Basic(_) => "basic".to_string(),
        };
        f.debug_struct("ApiConfig")
            .field("host", &self.host)
            .field("https", &self.tls.is_some())
            .field("base_path", &self.base_path)
            .field("auth", &auth)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let u = parse_url("https://10.96.0.1:443").unwrap();
        assert_eq!(
            (u.https, u.host.as_str(), u.path.as_str()),
            (true, "10.96.0.1:443", "")
        );
        let u = parse_url("http://localhost").unwrap();
        assert_eq!((u.host.as_str(), u.connect.1), ("localhost:80", 80));
        let u = parse_url("https://[::1]:6443/k8s/clusters/c-1/").unwrap();
        assert_eq!(u.host, "[::1]:6443");
        assert_eq!(u.connect, ("::1".to_string(), 6443));
        assert_eq!(u.path, "/k8s/clusters/c-1");
        assert_eq!(
            parse_url("https://[fd00::1]").unwrap().host,
            "[fd00::1]:443"
        );
        for bad in [
            "ftp://x",
            "https://",
            "https://h:x",
            "https://u@h",
            "https://h/?a=b",
            "10.0.0.1:443",
            "https://[::1",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn endpoint_http_has_no_tls_or_token() {
        let c = ApiConfig::from_endpoint("http://127.0.0.1:8001", None).unwrap();
        assert!(!c.is_https());
        assert_eq!(c.auth, Auth::None);
        assert_eq!(c.host(), "127.0.0.1:8001");
        let e = ApiConfig::from_endpoint(
            "https://127.0.0.1:6443",
            Some(TlsFiles {
                cert: Path::new("/nonexistent/c"),
                key: Path::new("/nonexistent/k"),
                ca: Path::new("/nonexistent/ca"),
            }),
        )
        .unwrap_err();
        assert!(e.contains("/nonexistent/"), "{e}");
    }

    #[test]
    fn token_file_is_read_each_time() {
        let dir = ringdns_testkit::TempDir::new("kc-token");
        let p = dir.path().join("token");
        std::fs::write(&p, "one\n").unwrap();
        let a = Auth::TokenFile(p.clone());
        assert_eq!(a.header().unwrap().unwrap(), "Bearer one");
        std::fs::write(&p, "two").unwrap();
        assert_eq!(a.header().unwrap().unwrap(), "Bearer two");
        std::fs::write(&p, "  \n").unwrap();
        assert!(a.header().is_err());
    }
}
