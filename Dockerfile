# The ringdns image: `docker build -t ringdns:0.1.0 .` (and, for deploy/kubernetes/nodelocal.yaml,
# `docker build --target node-local-init -t ringdns-node-local-init:0.1.0 .`).
# Runs as an unprivileged user; binding port 53 takes the capability NET_BIND_SERVICE, which
# the binary carries as a file capability (so the container's capability set must allow it:
# Docker's default set does, deploy/kubernetes adds it). glommio also needs io_uring allowed
# by the seccomp profile and RLIMIT_MEMLOCK >= 512 KiB: deploy/kubernetes/README.md.

FROM rust:1-bookworm AS build
# setcap first: this layer stays cached when only the sources change.
RUN apt-get update && apt-get install -y --no-install-recommends libcap2-bin \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin ringdns \
 && cp target/release/ringdns /ringdns \
 && setcap cap_net_bind_service=+ep /ringdns

# Only for nodelocal.yaml's init container: iproute2 to add the link-local address.
FROM debian:bookworm-slim AS node-local-init
RUN apt-get update && apt-get install -y --no-install-recommends iproute2 \
 && rm -rf /var/lib/apt/lists/*
USER 0:0

# glibc: mimalloc's C code and the binary link against it.
FROM debian:bookworm-slim
COPY --from=build /ringdns /usr/local/bin/ringdns
COPY Corefile.example /etc/ringdns/Corefile
USER 65532:65532
EXPOSE 53 53/udp 9153 8080 8181
ENTRYPOINT ["/usr/local/bin/ringdns"]
CMD ["-conf", "/etc/ringdns/Corefile"]
