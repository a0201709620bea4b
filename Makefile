# Everyday commands. The README's two commands are `cargo run --release -- serve` and
# `cargo test`; these targets wrap the rest.

.PHONY: serve test lint ci

serve:
	cargo run --release -- serve

test:
	cargo test

lint:
	cargo fmt --all -- --check
	cargo clippy --all-targets -- -D warnings

ci:
	bash .ci/run
