//! The host's name as Go's `os.Hostname` gives it to CoreDNS's plugins (chaos's
//! `hostname.bind`, nsid's default data): the kernel's node name, or `localhost` when it
//! cannot be read.

/// The host's name, `localhost` when there is none to read (CoreDNS's fallback).
pub fn hostname() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn it_is_the_kernels_node_name() {
        let kernel = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        assert_eq!(super::hostname(), kernel.trim_end());
    }
}
