# make install: the binary, its manual page and shell completions, the README, the systemd
# unit and (unless one is there) an example Corefile. PREFIX and DESTDIR as usual; the unit
# runs $(PREFIX)/bin/ringdns on $(SYSCONFDIR)/ringdns/Corefile.
PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
UNITDIR ?= /etc/systemd/system
DESTDIR ?=

.PHONY: build docs install test

build:
	cargo build --release --locked

# Generated from the command-line definition (src/cli.rs), so they always match it.
docs:
	cargo run --locked --example gen-docs -- target/docs

install: build docs
	install -D -m 755 target/release/ringdns $(DESTDIR)$(PREFIX)/bin/ringdns
	install -D -m 644 target/docs/ringdns.1 $(DESTDIR)$(PREFIX)/share/man/man1/ringdns.1
	install -D -m 644 target/docs/ringdns.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/ringdns
	install -D -m 644 target/docs/_ringdns $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_ringdns
	install -D -m 644 target/docs/ringdns.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/ringdns.fish
	install -D -m 644 README.md $(DESTDIR)$(PREFIX)/share/doc/ringdns/README.md
	install -D -m 644 tuning/ringdns.service $(DESTDIR)$(UNITDIR)/ringdns.service
	test -e $(DESTDIR)$(SYSCONFDIR)/ringdns/Corefile || install -D -m 644 Corefile.example $(DESTDIR)$(SYSCONFDIR)/ringdns/Corefile

test:
	cargo test
