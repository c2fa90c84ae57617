# The two commands the README promises, and the longer runs it documents.
#
#   make demo   shows the library at work
#   make check  runs every check (what CI runs)

SHELL := /bin/bash
export LANG := C.UTF-8
export LC_ALL := C.UTF-8
export PATH := $(HOME)/.cargo/bin:$(PATH)

.PHONY: demo check tools rust-checks elixir-checks docs-checks parity bench bench-host fuzz memory

tools:
	@scripts/ensure_tools.sh
	@# Test and doc dependencies: from the offline mirror when HEX_VENDOR_DIR
	@# names one (path deps, nothing to fetch), else from Hex.
	@if [ -z "$${HEX_VENDOR_DIR:-}" ]; then mix deps.get; fi

demo: tools
	@mix compile
	@mix openagents_policy.show

check: tools rust-checks elixir-checks docs-checks
	scripts/dialyzer.sh
	scripts/release_check.sh
	scripts/hot_upgrade.sh short
	scripts/faults/panic.sh
	scripts/faults/run.sh short
	@echo "make check: every check passed"

rust-checks:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	cargo test --workspace

elixir-checks:
	mix format --check-formatted
	MIX_ENV=test mix compile --force --warnings-as-errors
	mix test --warnings-as-errors

# Both docs, failing on any warning: rustdoc's, and ExDoc's (broken references
# included). The `docs` alias first redraws guides/assets/*.svg from the core.
docs-checks:
	RUSTDOCFLAGS="-D warnings" cargo doc -p openagents_policy --no-deps
	MIX_ENV=dev mix docs --warnings-as-errors

# Needs ../shared/reference (the seeds), which a user of the library does not have.
parity: tools
	mix run scripts/parity.exs

bench: tools
	MIX_ENV=prod mix run bench/run.exs

# The example host's attempts page over HTTP, in a database of its own
# (BENCH_DATABASE_URL; created, migrated and seeded on first use).
BENCH_DATABASE_URL ?= postgres://postgres:postgres@localhost:5432/perf_host_bench
bench-host: tools
	cd examples/host_app && MIX_ENV=prod DATABASE_URL=$(BENCH_DATABASE_URL) \
	  mix run --no-start ../../bench/host_requests.exs

fuzz: tools
	mix run scripts/fuzz.exs 1000000
	OPENAGENTS_FUZZ_CASES=200000 cargo test --release -p openagents_policy --test fuzz

memory: tools
	MIX_ENV=prod mix run scripts/memory.exs
