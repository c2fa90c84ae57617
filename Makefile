# The two commands the README promises, and the longer runs it documents.
#
#   make demo   shows the library at work
#   make check  runs every check (what CI runs)

SHELL := /bin/bash
export LANG := C.UTF-8
export LC_ALL := C.UTF-8
export PATH := $(HOME)/.cargo/bin:$(PATH)

.PHONY: demo check tools deps rust-checks rust-lint rust-test elixir-checks docs-checks dialyzer panic-check host-check \
	parity bench bench-diff bench-host fuzz precompiled precompiled-check reference rolling-replace

tools:
	@scripts/ensure_tools.sh

# Test, doc and bench dependencies: from the offline mirror when
# HEX_VENDOR_DIR names one (path deps, nothing to fetch), else from Hex; with
# neither, it says so and what to do (scripts/ensure_deps.sh).
deps: tools
	@scripts/ensure_deps.sh

# MIX_ENV=demo declares one dependency, NimbleOptions (mix.exs): taken from
# the mirror HEX_VENDOR_DIR names, else from ../shared/vendor beside this
# checkout when there is one (this project's own machines), else from Hex
# (installed first when it is missing). No rustler: cargo builds the NIF
# wherever its configuration says and it is put where rustler would put it
# (priv/native: dev/demo/build_nif.sh), and OpenAgentsPolicy.Native, with no
# rustler_precompiled to use, loads it from there.
demo: export HEX_VENDOR_DIR := $(or $(HEX_VENDOR_DIR),$(wildcard $(abspath $(CURDIR)/../shared/vendor)))
demo:
	@scripts/ensure_tools.sh demo
	@dev/demo/build_nif.sh
	@scripts/ensure_deps.sh . demo
	@MIX_ENV=demo mix compile
	@MIX_ENV=demo mix openagents_policy.show

# The library's own checks, then the example host's (examples/host_app/Makefile:
# its suite and release, the fault runs, a rolling replacement under load),
# in this order. Each part is a target of its own; CI's lanes (below) run named sets
# of them.
check: deps rust-checks elixir-checks lint-repo docs-checks decisions-check dialyzer precompiled-check panic-check host-check
	@echo "make check: every check passed"

# CI's lanes (.ci/run runs the three side by side, on two cores). Each part
# runs on the lanes where it proves something of its own, and on no other;
# each lane's precompiled check comes last, as it waits for the precompiled
# build CI runs beside the lanes:
#
#   part                          bookworm  trixie  testing
#   rust-lint (fmt, clippy)       yes       -       -
#   rust-test                     -         yes     -
#   elixir-checks                 yes       yes     yes
#   lint-repo                     yes       -       -
#   decisions-check               yes       -       -
#   docs-checks                   -         yes     -
#   dialyzer                      -         yes     -
#   panic-check                   -         yes     -
#   precompiled-check             yes (+arm64) -    yes
#   host suite                    yes       yes     yes
#   host release, faults          yes       -       yes
#   host rolling-replace          -         -       yes
#
#   - bookworm is the floor: Elixir 1.14 / OTP 25, ../shared/vendor (Phoenix
#     1.7, rustler 0.36), rustup's stable Rust and the pinned rustfmt and
#     clippy (LINT_RUST) a contributor runs: the oldest stack a host may run (the
#     suites, the source build, the example host's release and faults, the
#     precompiled check with its arm64 load: PRECOMPILED_ARM64=1, the
#     aarch64 library in an arm64 root under qemu-user, as root);
#   - trixie is Rust 1.85, the declared rust-version, and Elixir 1.18 / OTP
#     27 with ../shared/vendor-1.18 (rustler 0.38, the app's ExDoc and
#     dialyxir): the workspace built and tested with that rustc, the suites,
#     Dialyzer, both docs and the panic check;
#   - testing is the app's own stack, Elixir 1.20 / OTP 29 and
#     ../shared/vendor-1.18 (Phoenix 1.8), whose Dockerfile has no Rust:
#     what a host sees (the suites, the precompiled check, the example
#     host's release, faults and the rolling replacement the app deploys
#     by). Its Debian cargo builds the NIF the suites load.
# Each of the rest runs once, on the lane with room for it (bookworm starts
# at once, the newer two once their roots are made): they ask the same code
# the same questions on every toolchain. The repository's checks and the
# decision check read the same files and core everywhere (and every lane's
# own compile is a source build, with its own rustler); the docs and
# Dialyzer judge this library's own code, not a host's; a panic is caught
# by the NIF crate, the same Rust in every lane; and the example host's
# release and faults on the Elixir between the floor and the app's prove
# nothing those two do not (its suite runs there too: its property holds
# where_visible/2 to effective_tier/2 on PostgreSQL, with that lane's Ecto).
# check-lane-single is CI's one lane where there are no newer ones: all of
# make check, with bookworm's additions.
.PHONY: check-lane-bookworm check-lane-trixie check-lane-testing check-lane-single
check-lane-bookworm check-lane-single: export PRECOMPILED_ARM64 := 1
check-lane-bookworm: deps rust-lint elixir-checks lint-repo decisions-check
	@$(MAKE) --no-print-directory -C examples/host_app release faults
	@$(MAKE) --no-print-directory precompiled-check
	@echo "make check-lane-bookworm: every check of the lane passed"
check-lane-trixie: deps rust-test elixir-checks dialyzer docs-checks panic-check
	@$(MAKE) --no-print-directory -C examples/host_app suite
	@echo "make check-lane-trixie: every check of the lane passed"
check-lane-testing: deps elixir-checks host-check
	@$(MAKE) --no-print-directory precompiled-check
	@echo "make check-lane-testing: every check of the lane passed"
check-lane-single: check

dialyzer: deps
	mix dialyzer

panic-check:
	scripts/panic_check.sh

host-check:
	@$(MAKE) --no-print-directory -C examples/host_app check

# --locked: built and tested from Cargo.lock as it is (the trixie lane's
# cargo is the declared rust-version's, so that lane proves it).
rust-checks: rust-lint rust-test
# Each also with the core's test-only panic_probe feature (scripts/panic_check.sh).
# rustfmt and clippy of one pinned Rust (rustup installs it when missing):
# a new stable's lints arrive when this line moves, not on CI's next fresh
# machine.
LINT_RUST := 1.99.1
rust-lint:
	@{ cargo +$(LINT_RUST) fmt --version && cargo +$(LINT_RUST) clippy --version; } >/dev/null 2>&1 || \
	  rustup toolchain install $(LINT_RUST) --profile minimal -c rustfmt -c clippy
	cargo +$(LINT_RUST) fmt --all -- --check
	cargo +$(LINT_RUST) clippy --workspace --all-targets --locked -- -D warnings
	cargo +$(LINT_RUST) clippy -p openagents_policy --all-targets --locked --features panic_probe -- -D warnings
rust-test:
	cargo test --workspace --locked
	cargo test -p openagents_policy --locked --features panic_probe --test panic_probe

elixir-checks:
	mix format --check-formatted
	MIX_ENV=test mix compile --force --warnings-as-errors
	mix test --warnings-as-errors

# The checks of the repository rather than the library (test/repo/, which
# `mix test` leaves out): the docs' configuration, the crates' manifests, the
# precompiled targets and the macOS check script, the committed pictures and
# schedule table, and the source build of a checkout.
.PHONY: lint-repo
lint-repo: deps
	mix test --warnings-as-errors --include repo test/repo

# Everything generated from the rules, written anew after a rule changes
# (guides/changing-a-rule.md): the package's decision document (its SHA-256
# is the decision digest nodes compare), the guides' pictures and the
# disclosure guide's schedule table; then the Markdown for CHANGELOG.md's
# "## [Unreleased]", printed for the maintainer to paste and edit.
.PHONY: decisions decisions-diff decisions-check
decisions: deps
	cargo run -q --locked -p openagents_policy_decisions --example decisions -- document > priv/decisions.json.new
	mv priv/decisions.json.new priv/decisions.json
	MIX_ENV=dev mix openagents_policy.pictures
	MIX_ENV=dev mix openagents_policy.show --write-schedule
	@$(MAKE) --no-print-directory decisions-diff

# What the core's rules change since the last release, for whom: the last
# release's decision document (last-release/decisions.json) against the
# core's own, as Markdown.
decisions-diff:
	@cargo run -q --locked -p openagents_policy_decisions --example decisions -- diff last-release/decisions.json

# No decision change ships unannounced: fails when the core's document
# differs from the last release's and CHANGELOG.md's Unreleased section
# lacks `make decisions-diff`'s Markdown.
decisions-check:
	cargo run -q --locked -p openagents_policy_decisions --example decisions -- check last-release/decisions.json CHANGELOG.md

# Both docs, failing on any warning: rustdoc's, and ExDoc's (broken references
# included). The `docs` alias first redraws guides/assets/*.svg from the core.
docs-checks:
	RUSTDOCFLAGS="-D warnings" cargo doc -p openagents_policy -p openagents_policy_decisions --no-deps
	MIX_ENV=dev mix docs --warnings-as-errors

# The precompiled NIFs of every published target, into dist/ (several
# minutes: six cross builds), and their proof. make check runs the proof
# when dist/ is there (CI builds it and sets PRECOMPILED_REQUIRED=1). A lane
# CI starts while it builds dist/ has PRECOMPILED_READY, the file CI writes
# when the build has ended: the proof waits for it, and fails unless it
# says ok.
precompiled:
	scripts/precompiled_build.sh

precompiled-check:
	@if [ -n "$${PRECOMPILED_READY:-}" ]; then \
	  waited=0; \
	  until [ -e "$$PRECOMPILED_READY" ] || [ $$waited -ge 1800 ]; do sleep 5; waited=$$((waited + 5)); done; \
	  grep -qx ok "$$PRECOMPILED_READY" 2>/dev/null || \
	    { echo "precompiled check: the precompiled build failed or had not ended after $$waited s (CI's log)" >&2; exit 1; }; \
	  echo "precompiled check: waited $$waited s for the precompiled build"; \
	fi
	@if [ -f dist/checksum-Elixir.OpenAgentsPolicy.Native.exs ]; then \
	  scripts/precompiled_check.sh; \
	elif [ "$${PRECOMPILED_REQUIRED:-0}" = 1 ]; then \
	  echo "precompiled check: no dist/ (make precompiled)" >&2; exit 1; \
	else \
	  echo "precompiled check skipped: no dist/ (run make precompiled first)"; \
	fi

# The app's deploy lane for a new version of this library
# (guides/deploying.md): three release nodes of the example host under load,
# replaced one at a time by a candidate the gate let through, after it
# refused a widening one.
rolling-replace: tools
	@$(MAKE) --no-print-directory -C examples/host_app rolling-replace

# parity, bench and bench-host compare the library with the seeds, so they
# need ../shared/reference (the seeds, runnable), which this repository's CI
# lays beside the checkout and a user of the library does not have.
REFERENCE := ../shared/reference/load.exs
reference:
	@test -f $(REFERENCE) || { echo "needs the seeds beside the checkout: $(REFERENCE) is missing" >&2; exit 1; }

parity: deps reference
	mix run scripts/parity.exs

# Seed vs library with Benchee (MIX_ENV=bench: compiled as a host compiles it).
bench: deps reference
	MIX_ENV=bench mix run bench/run.exs

# The decision diff's cost on two whole documents: in Rust alone, then
# through the NIF (OpenAgentsPolicy.Decisions.diff/3). No seed has a diff.
bench-diff: deps
	cargo run -q --release --locked -p openagents_policy_decisions --example diff_bench
	MIX_ENV=bench mix run bench/decisions_diff.exs

# The library's share of a real request: the example host on PostgreSQL over
# HTTP (bench/host_requests.exs). Its own database (HOST_BENCH_DATABASE_URL,
# seeded once and kept) and port (HOST_BENCH_PORT); needs ../shared/reference.
bench-host: deps reference
	scripts/ensure_deps.sh examples/host_app bench
	cd examples/host_app && MIX_ENV=bench mix run --no-start ../../bench/host_requests.exs


# A million calls held to the tests' oracle, with the VM's memory measured
# flat across them; then the core's own fuzz test, longer.
fuzz: deps
	MIX_ENV=bench mix run scripts/fuzz.exs 1000000
	OPENAGENTS_FUZZ_CASES=200000 cargo test --release -p openagents_policy --test fuzz
