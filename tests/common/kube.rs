//! A Kubernetes cluster for the tests that run the kubernetes plugin (and k8s_external on
//! it): the fake API server of the tests' own (ringdns-testkit's `kubeapi`) holding what a
//! test puts there, a kubeconfig that reaches it, and the real binary started on it.

use super::{Server, TempDir};
use ringdns_testkit::kubeapi::FakeApi;
use ringdns_testkit::kubeapi::objects::{endpoint, endpoint_slice, service};
use std::path::{Path, PathBuf};

/// A fake API server, and a kubeconfig for it in a directory of the test's own (removed
/// with it).
pub struct Cluster {
    pub api: FakeApi,
    pub kubeconfig: PathBuf,
    pub dir: TempDir,
}

impl Cluster {
    /// A fake API server holding what `populate` applies to it.
    pub fn start(populate: impl FnOnce(&FakeApi)) -> Cluster {
        let api = FakeApi::start();
        populate(&api);
        let dir = TempDir::new();
        let kubeconfig = api.kubeconfig(&dir.0);
        Cluster {
            api,
            kubeconfig,
            dir,
        }
    }

    /// The binary on the Corefile `corefile(port, kubeconfig)`.
    pub fn serve(&self, corefile: impl Fn(u16, &Path) -> String + 'static) -> Server {
        let kc = self.kubeconfig.clone();
        Server::start(move |p| corefile(p, &kc))
    }
}

/// The headless service `hdls` of `testns` (port `http`, TCP 80) and its slice `hdls-1`:
/// ready endpoints `web-0` (172.16.1.1) and `web-1` (172.16.1.2), and 172.16.1.9 not
/// ready. What the cluster tests' headless answers come from.
pub fn headless_service(api: &FakeApi) {
    api.apply(
        service("testns", "hdls")
            .headless()
            .port("http", "TCP", 80)
            .build(),
    );
    api.apply(
        endpoint_slice("testns", "hdls-1", "hdls", "IPv4")
            .endpoint(endpoint(&["172.16.1.1"]).hostname("web-0"))
            .endpoint(endpoint(&["172.16.1.2"]).hostname("web-1"))
            .endpoint(endpoint(&["172.16.1.9"]).ready(false))
            .port("http", "TCP", 80)
            .build(),
    );
}

/// The service `web` of `testns` (cluster IP 10.0.0.1, port `http`, TCP 80) with external
/// IPs 192.0.2.10 and 2001:db8::10 and a load balancer's 198.51.100.10: what the
/// k8s_external tests' external answers come from.
pub fn external_service(api: &FakeApi) {
    api.apply(
        service("testns", "web")
            .cluster_ips(&["10.0.0.1"])
            .external_ips(&["192.0.2.10", "2001:db8::10"])
            .lb_ingress_ip("198.51.100.10")
            .port("http", "TCP", 80)
            .build(),
    );
}
