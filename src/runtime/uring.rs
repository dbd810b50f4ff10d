//! Whether this process may use io_uring, checked once before any executor starts. glommio
//! sets up one ring per executor thread and panics on that thread when the kernel refuses;
//! inside a container that is usually the runtime's seccomp profile, and the panic says only
//! "Operation not permitted". This check makes one `io_uring_setup` of its own and, when it
//! is refused, names the likely cause and its fix in one paragraph, so `run` exits 1 with it
//! before any port is opened.
//!
//! The causes (deploy/kubernetes/README.md cites the sources):
//! - EPERM from a seccomp filter: the default profiles of Docker 25 and later and of
//!   containerd 2.0 and later (Kubernetes' `RuntimeDefault` on containerd) leave
//!   io_uring_setup, io_uring_enter and io_uring_register out of their allow list and
//!   answer EPERM for what is not listed.
//! - ENOSYS from a seccomp filter: the containers/common profile (Podman, CRI-O) answers
//!   ENOSYS for what it does not list, io_uring included.
//! - EPERM from the `kernel.io_uring_disabled` sysctl: 2 refuses everyone; 1 refuses
//!   processes without CAP_SYS_ADMIN that are not in the group `kernel.io_uring_group`.
//! - ENOSYS without a filter: a kernel built without io_uring, or older than 5.1.

use std::io;

/// Where the kernel says whether io_uring is turned off (0 on, 1 privileged only, 2 off).
const DISABLED_SYSCTL: &str = "/proc/sys/kernel/io_uring_disabled";

/// What the process and the host say about the refusal, read only once it happened.
#[derive(Debug, Clone, Default, PartialEq)]
struct Facts {
    /// `kernel.io_uring_disabled`, when the kernel has the sysctl.
    disabled: Option<u32>,
    /// Whether a seccomp filter applies to this process (`Seccomp: 2` in /proc/self/status).
    seccomp_filter: bool,
    /// The kernel's release (`uname -r`).
    kernel: String,
}

/// Checks that an io_uring can be set up; the error is the paragraph `run` prints before
/// exiting 1. Errors other than EPERM and ENOSYS pass: glommio meets them again and its own
/// error says what they are.
pub fn check() -> Result<(), String> {
    match setup_once() {
        Ok(()) => Ok(()),
        Err(e) => match explain(e.raw_os_error().unwrap_or(0), &facts()) {
            Some(why) => Err(why),
            None => Ok(()),
        },
    }
}

/// One `io_uring_setup` with a single entry; the ring is closed at once.
fn setup_once() -> io::Result<()> {
    // struct io_uring_params is 120 bytes: seven u32 fields, three reserved u32 and two
    // 40-byte offset tables. Zeroed, it asks for no flags; the kernel fills the rest in.
    let mut params = [0u64; 15];
    // SAFETY: io_uring_setup reads and writes exactly sizeof(struct io_uring_params), 120
    // bytes, through the pointer, and `params` is 120 bytes, 8-aligned, alive for the call.
    let fd = unsafe { libc::syscall(libc::SYS_io_uring_setup, 1u32, params.as_mut_ptr()) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is the ring's descriptor the call just returned; nothing else holds it.
    unsafe { libc::close(fd as libc::c_int) };
    Ok(())
}

/// Reads the sysctl, the seccomp mode and the kernel release.
fn facts() -> Facts {
    let disabled = std::fs::read_to_string(DISABLED_SYSCTL)
        .ok()
        .and_then(|s| s.trim().parse().ok());
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    Facts {
        disabled,
        seccomp_filter: seccomp_mode(&status) == Some(2),
        kernel,
    }
}

/// The `Seccomp:` field of /proc/PID/status: 0 none, 1 strict, 2 filter.
fn seccomp_mode(status: &str) -> Option<u32> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Seccomp:"))
        .and_then(|v| v.trim().parse().ok())
}

/// The message for a refused io_uring_setup that failed with `errno`, or `None` when the
/// error is not one of the refusals this check is for.
fn explain(errno: i32, f: &Facts) -> Option<String> {
    const NEED: &str = "ringdns's executors (glommio) need io_uring";
    const SECCOMP_FIX: &str = "In Kubernetes set the container's securityContext.seccompProfile \
        to Unconfined, or to a Localhost profile that also allows io_uring_setup, \
        io_uring_enter and io_uring_register (deploy/kubernetes/README.md); with docker or \
        podman, run with --security-opt seccomp=unconfined or such a profile";
    let sysctl = match f.disabled {
        Some(n @ 1..) => Some(format!(
            "{DISABLED_SYSCTL} is {n} ({}); set it to 0 on the host (sysctl \
             kernel.io_uring_disabled=0){}",
            if n == 1 {
                "only processes with CAP_SYS_ADMIN or in the group kernel.io_uring_group may use io_uring"
            } else {
                "nobody may use io_uring"
            },
            if n == 1 {
                ", or run ringdns in the group kernel.io_uring_group names"
            } else {
                ""
            }
        )),
        _ => None,
    };
    let text = match (errno, f.seccomp_filter, sysctl) {
        (libc::EPERM, true, sysctl) => format!(
            "io_uring is not allowed here: io_uring_setup was refused with EPERM and this \
             process runs under a seccomp filter, which is what the default seccomp profile \
             of Docker (25 and later) and of containerd (2.0 and later, Kubernetes' \
             RuntimeDefault) does. {SECCOMP_FIX}.{}",
            sysctl.map(|s| format!(" Also, {s}.")).unwrap_or_default()
        ),
        (libc::EPERM, false, Some(sysctl)) => format!(
            "io_uring is turned off on this host: io_uring_setup was refused with EPERM and \
             {sysctl}. {NEED}."
        ),
        (libc::EPERM, false, None) => format!(
            "io_uring is not allowed here: io_uring_setup was refused with EPERM, with no \
             seccomp filter and {DISABLED_SYSCTL} {}; a Linux security module (SELinux, \
             AppArmor) may be refusing it. {NEED}.",
            if f.disabled.is_some() {
                "at 0"
            } else {
                "absent"
            }
        ),
        (libc::ENOSYS, true, _) => format!(
            "io_uring is not allowed here: io_uring_setup failed with ENOSYS under a seccomp \
             filter, which is how the containers/common profile of Podman and CRI-O refuses \
             the calls it does not list (the kernel is {}). {SECCOMP_FIX}.",
            f.kernel
        ),
        (libc::ENOSYS, false, _) => format!(
            "this kernel ({}) has no io_uring: io_uring_setup failed with ENOSYS (built without \
             CONFIG_IO_URING, or older than 5.1). {NEED} and Linux 5.8 or later.",
            f.kernel
        ),
        _ => return None,
    };
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(disabled: Option<u32>, seccomp_filter: bool) -> Facts {
        Facts {
            disabled,
            seccomp_filter,
            kernel: "6.1.0-test".into(),
        }
    }

    #[test]
    fn the_check_passes_where_io_uring_works() {
        // The tests run glommio executors, so io_uring works here: the check must not
        // refuse it (the refusals are tested below and in tests/deploy.rs under strace).
        if let Err(why) = check() {
            panic!("io_uring refused on the test machine: {why}");
        }
    }

    #[test]
    fn eperm_under_seccomp_names_the_profile_and_its_fix() {
        let m = explain(libc::EPERM, &facts(Some(0), true)).unwrap();
        assert!(m.contains("refused with EPERM"), "{m}");
        assert!(m.contains("seccomp filter"), "{m}");
        assert!(m.contains("Docker (25 and later)"), "{m}");
        assert!(m.contains("containerd (2.0 and later"), "{m}");
        assert!(m.contains("seccompProfile"), "{m}");
        assert!(m.contains("io_uring_setup, io_uring_enter and io_uring_register"));
        assert!(!m.contains("io_uring_disabled"), "{m}");
        // One paragraph.
        assert!(!m.contains('\n'), "{m}");
    }

    #[test]
    fn eperm_with_the_sysctl_names_it_and_its_value() {
        let m = explain(libc::EPERM, &facts(Some(2), false)).unwrap();
        assert!(m.starts_with("io_uring is turned off on this host"), "{m}");
        assert!(m.contains("/proc/sys/kernel/io_uring_disabled is 2"), "{m}");
        assert!(m.contains("nobody may use io_uring"), "{m}");
        assert!(!m.contains("seccomp"), "{m}");
        let m = explain(libc::EPERM, &facts(Some(1), false)).unwrap();
        assert!(m.contains("io_uring_disabled is 1"), "{m}");
        assert!(m.contains("kernel.io_uring_group"), "{m}");
        // Both at once: the filter first, then the sysctl.
        let m = explain(libc::EPERM, &facts(Some(1), true)).unwrap();
        let (filter, sysctl) = (m.find("seccomp filter").unwrap(), m.find("Also,").unwrap());
        assert!(
            filter < sysctl && m.contains("io_uring_disabled is 1"),
            "{m}"
        );
    }

    #[test]
    fn eperm_with_neither_points_at_a_security_module() {
        let m = explain(libc::EPERM, &facts(Some(0), false)).unwrap();
        assert!(m.contains("io_uring_disabled at 0"), "{m}");
        assert!(m.contains("security module"), "{m}");
        let m = explain(libc::EPERM, &facts(None, false)).unwrap();
        assert!(m.contains("io_uring_disabled absent"), "{m}");
    }

    #[test]
    fn enosys_is_the_kernel_or_a_profile_that_answers_enosys() {
        let m = explain(libc::ENOSYS, &facts(None, false)).unwrap();
        assert!(
            m.starts_with("this kernel (6.1.0-test) has no io_uring"),
            "{m}"
        );
        assert!(m.contains("Linux 5.8 or later"), "{m}");
        let m = explain(libc::ENOSYS, &facts(None, true)).unwrap();
        assert!(
            m.contains("containers/common profile of Podman and CRI-O"),
            "{m}"
        );
        assert!(m.contains("seccompProfile"), "{m}");
    }

    #[test]
    fn other_errors_are_left_to_glommio() {
        for errno in [libc::ENOMEM, libc::EMFILE, libc::EINVAL, 0] {
            assert_eq!(explain(errno, &facts(Some(2), true)), None, "{errno}");
        }
    }

    #[test]
    fn the_seccomp_mode_is_read_from_proc_status() {
        let status = "Name:\tringdns\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t1\n";
        assert_eq!(seccomp_mode(status), Some(2));
        assert_eq!(seccomp_mode("Seccomp:\t0\n"), Some(0));
        assert_eq!(seccomp_mode("Name:\tx\n"), None);
    }
}
