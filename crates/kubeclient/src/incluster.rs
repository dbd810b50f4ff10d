//! The in-cluster configuration, as client-go's `rest.InClusterConfig`: the API server from
//! `KUBERNETES_SERVICE_HOST`/`KUBERNETES_SERVICE_PORT`, the service account's token and CA
//! from its mounted directory.

use crate::config::{ApiConfig, Auth};
use crate::tls::TlsInputs;
use std::path::PathBuf;

/// Where the kubelet mounts the service account.
const SERVICEACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// Test-only override of [`SERVICEACCOUNT_DIR`].
const SERVICEACCOUNT_DIR_ENV: &str = "RINGDNS_K8S_SERVICEACCOUNT_DIR";

/// client-go's `ErrNotInCluster` text.
const NOT_IN_CLUSTER: &str = "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined";

/// The service-account directory `env` points to.
pub(crate) fn dir(env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    env(SERVICEACCOUNT_DIR_ENV)
        .filter(|d| !d.is_empty())
        .map_or_else(|| PathBuf::from(SERVICEACCOUNT_DIR), PathBuf::from)
}

/// Builds the configuration from the environment `env` gives.
pub(crate) fn config(env: &dyn Fn(&str) -> Option<String>) -> Result<ApiConfig, String> {
    let host = env("KUBERNETES_SERVICE_HOST").unwrap_or_default();
    let port = env("KUBERNETES_SERVICE_PORT").unwrap_or_default();
    if host.is_empty() || port.is_empty() {
        return Err(NOT_IN_CLUSTER.to_string());
    }
    let dir = dir(env);
    let token = dir.join("token");
    // client-go fails when the token cannot be read at start.
    std::fs::read(&token).map_err(|e| format!("open {}: {e}", token.display()))?;
    let ca = dir.join("ca.crt");
    let ca_pem = match std::fs::read(&ca) {
        Ok(pem) => Some(pem),
        Err(e) => {
            // As client-go: logged, and the system roots are used instead.
            ringdns_plugin::error!(
                "plugin/kubernetes: Expected to load root CA config from {}, but got err: {e}",
                ca.display()
            );
            None
        }
    };
    let hostport = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    ApiConfig::build(
        &format!("https://{hostport}"),
        Some(TlsInputs {
            ca_pem,
            ..TlsInputs::default()
        }),
        None,
        Auth::TokenFile(token),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env<'a>(m: &'a HashMap<&'static str, String>) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| m.get(k).cloned()
    }

    #[test]
    fn missing_env_gives_client_gos_text() {
        let mut m = HashMap::new();
        assert_eq!(config(&env(&m)).unwrap_err(), NOT_IN_CLUSTER);
        m.insert("KUBERNETES_SERVICE_HOST", "10.96.0.1".to_string());
        assert_eq!(config(&env(&m)).unwrap_err(), NOT_IN_CLUSTER);
        m.insert("KUBERNETES_SERVICE_PORT", String::new());
        assert_eq!(config(&env(&m)).unwrap_err(), NOT_IN_CLUSTER);
    }

    #[test]
    fn default_dir_and_override() {
        let m = HashMap::new();
        assert_eq!(
            dir(&env(&m)),
            PathBuf::from("/var/run/secrets/kubernetes.io/serviceaccount")
        );
        let mut m = HashMap::new();
        m.insert(SERVICEACCOUNT_DIR_ENV, "/tmp/sa".to_string());
        assert_eq!(dir(&env(&m)), PathBuf::from("/tmp/sa"));
    }

    #[test]
    fn token_required_ca_optional_v6_host() {
        let tmp = ringdns_testkit::TempDir::new("kc-incluster");
        let d = tmp.path();
        let mut m = HashMap::new();
        m.insert("KUBERNETES_SERVICE_HOST", "fd00::1".to_string());
        m.insert("KUBERNETES_SERVICE_PORT", "443".to_string());
        m.insert(SERVICEACCOUNT_DIR_ENV, d.display().to_string());
        let e = config(&env(&m)).unwrap_err();
        assert!(e.contains("token"), "{e}");
        std::fs::write(d.join("token"), "abc").unwrap();
        // No ca.crt: system roots (when the machine has some), as client-go.
        if let Ok(c) = config(&env(&m)) {
            assert_eq!(c.host(), "[fd00::1]:443");
            assert_eq!(c.auth, Auth::TokenFile(d.join("token")));
        }
        std::fs::write(d.join("ca.crt"), "not a pem").unwrap();
        assert!(config(&env(&m)).unwrap_err().contains("root certificates"));
    }
}
