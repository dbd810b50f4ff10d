//! The locked-memory limit glommio needs, checked before any executor starts. glommio
//! refuses to set up an executor's reactor when the soft RLIMIT_MEMLOCK is below 512 KiB
//! (vendor/glommio, `Reactor::new`), whoever runs it, root included; the executor's thread
//! then ends before the core could start. Above that, nothing more is required: the
//! registered `io_memory` buffers are accounted against the limit for processes without
//! CAP_IPC_LOCK, but glommio only warns and goes on without them when they do not fit, and
//! the rings themselves are accounted to the memory cgroup since Linux 5.12.

use nix::sys::resource::{Resource, getrlimit, setrlimit};

/// glommio's minimum soft RLIMIT_MEMLOCK, bytes.
pub const NEEDED: u64 = 512 << 10;

/// Makes sure the soft limit is at least [`NEEDED`]: raises it (and the hard limit, which
/// takes CAP_SYS_RESOURCE) when it is lower, returning what it did for the log; when that
/// is not allowed, says why ringdns cannot start and how to raise the limit.
pub fn ensure() -> Result<Option<String>, String> {
    let (soft, hard) = getrlimit(Resource::RLIMIT_MEMLOCK)
        .map_err(|e| format!("getrlimit(RLIMIT_MEMLOCK): {e}"))?;
    check(soft, hard, |soft, hard| {
        setrlimit(Resource::RLIMIT_MEMLOCK, soft, hard).map_err(|e| e.to_string())
    })
}

/// [`ensure`] on given limits, `raise` setting new ones.
fn check(
    soft: u64,
    hard: u64,
    raise: impl FnOnce(u64, u64) -> Result<(), String>,
) -> Result<Option<String>, String> {
    if soft >= NEEDED {
        return Ok(None);
    }
    // Above the hard limit only with CAP_SYS_RESOURCE; tried all the same.
    let raised = raise(NEEDED, hard.max(NEEDED)).map_err(|e| match hard < NEEDED {
        true => format!("the hard limit is {}: {e}", kib(hard)),
        false => e,
    });
    match raised {
        Ok(()) => Ok(Some(format!(
            "RLIMIT_MEMLOCK raised from {} to {} (the least glommio's io_uring executors need; hard limit {})",
            kib(soft),
            kib(NEEDED),
            kib(hard.max(NEEDED))
        ))),
        Err(why) => Err(format!(
            "RLIMIT_MEMLOCK (locked memory) is {} and cannot be raised ({why}); ringdns's io_uring \
             executors (glommio) need at least {} ({NEEDED} bytes). Raise it where ringdns is \
             started: `ulimit -l {}` (or unlimited) in its shell, `LimitMEMLOCK={}K` (or infinity) \
             in its systemd unit, `--ulimit memlock={NEEDED}:{NEEDED}` with docker or podman, or \
             `memlock` in /etc/security/limits.conf for login sessions. In Kubernetes a \
             container gets the limit the node's container runtime runs with (a pod cannot \
             set it): raise `LimitMEMLOCK=` in the runtime's systemd unit (containerd.service, \
             crio.service) and restart it, or run the container as root with the capability \
             SYS_RESOURCE so that ringdns raises it itself",
            kib(soft),
            kib(NEEDED),
            NEEDED >> 10,
            NEEDED >> 10
        )),
    }
}

/// A limit for people: `64 KiB`, `unlimited`.
fn kib(v: u64) -> String {
    if v == nix::sys::resource::RLIM_INFINITY {
        "unlimited".into()
    } else {
        format!("{} KiB", v >> 10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_low_limit_is_raised_when_allowed_else_refused_with_how_to_raise_it() {
        assert_eq!(check(NEEDED, NEEDED, |_, _| panic!("no raise")), Ok(None));
        let raised = check(64 << 10, u64::MAX, |s, h| {
            assert_eq!((s, h), (NEEDED, u64::MAX));
            Ok(())
        });
        assert!(
            raised
                .unwrap()
                .unwrap()
                .contains("raised from 64 KiB to 512 KiB")
        );
        let refused = check(64 << 10, 256 << 10, |s, h| {
            assert_eq!((s, h), (NEEDED, NEEDED));
            Err("EPERM".into())
        })
        .unwrap_err();
        assert!(
            refused.starts_with(
                "RLIMIT_MEMLOCK (locked memory) is 64 KiB and cannot be raised (the hard limit is 256 KiB: EPERM)"
            ),
            "{refused}"
        );
        for how in [
            "In Kubernetes",
            "LimitMEMLOCK=` in the runtime's systemd unit",
            "SYS_RESOURCE",
            "ulimit -l 512",
            "LimitMEMLOCK=512K",
            "--ulimit memlock=524288:524288",
        ] {
            assert!(refused.contains(how), "{how} in {refused}");
        }
        let failed = check(0, u64::MAX, |_, _| Err("EPERM".into())).unwrap_err();
        assert!(failed.contains("cannot be raised (EPERM)"), "{failed}");
    }
}
