# The two commands the README promises, and the longer runs it documents.
#
#   make demo   shows the library at work
#   make check  runs every check (what CI runs)

SHELL := /bin/bash
export LANG := C.UTF-8
export LC_ALL := C.UTF-8
export PATH := $(HOME)/.cargo/bin:$(PATH)

.PHONY: demo check tools rust-checks elixir-checks parity bench fuzz memory

tools:
	@scripts/ensure_tools.sh
	@# Test and doc dependencies: from the offline mirror when HEX_VENDOR_DIR
	@# names one (path deps, nothing to fetch), else from Hex.
	@if [ -z "$${HEX_VENDOR_DIR:-}" ]; then mix deps.get; fi

demo: tools
	@mix compile
	@mix openagents_policy.show

check: tools rust-checks elixir-checks
	scripts/dialyzer.sh
	scripts/release_check.sh
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
	mix test

# Needs ../shared/reference (the seeds), which a user of the library does not have.
parity: tools
	mix run scripts/parity.exs

bench: tools
	MIX_ENV=prod mix run bench/run.exs

fuzz: tools
	mix run scripts/fuzz.exs 1000000
	OPENAGENTS_FUZZ_CASES=200000 cargo test --release -p openagents_policy --test fuzz

memory: tools
	MIX_ENV=prod mix run scripts/memory.exs
