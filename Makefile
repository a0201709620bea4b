# Everyday commands. The README's two commands are `cargo run --release -- serve` and
# `make test` (the machine's set-up, then `cargo test --features libavcodec`); these
# targets wrap the rest.
#
# The budget harness opens one socket per stream on each side: raise the file limit.

.PHONY: serve setup test lint ci bench bench-enforce bench-thumbs compare viewers catalogue

serve:
	cargo run --release -- serve

# What the tests need, installed where missing (tools/setup-test-machine.sh, the list .ci/run
# uses too): FFmpeg's libraries, libclang, chromium, GStreamer, nginx, node, the players.
setup:
	bash tools/setup-test-machine.sh

test: setup
	cargo test --features libavcodec

lint:
	cargo fmt --all -- --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --all-targets --features libavcodec -- -D warnings

ci:
	bash .ci/run

bench:
	ulimit -n "$$(ulimit -Hn)" 2>/dev/null || true; \
	cargo bench --bench budgets

bench-enforce:
	ulimit -n "$$(ulimit -Hn)" 2>/dev/null || true; \
	cargo bench --bench budgets -- --enforce

# Thumbnails of a 1080p title beside `ffmpeg -ss`, and storyboard sheets of the 60-minute
# asset (benches/budgets/thumbs.rs; no budgets, figures in docs/performance.md).
bench-thumbs:
	BUDGET_SECTIONS=thumbs cargo bench --bench budgets

# 10,000 viewers of the 60-minute asset against the release server (benches/viewers.rs;
# run `make bench` once first to make the asset).
viewers:
	ulimit -n "$$(ulimit -Hn)" 2>/dev/null || true; \
	cargo bench --bench viewers

# vodpack side by side with the peer (nginx-vod-module), from outside both processes:
# PEER_URL=http://127.0.0.1:8081 PEER_PIDS=... make compare (see benches/compare.sh).
compare:
	bash benches/compare.sh

# 2,000 titles on a loopback object store that answers after 20 ms, 32 Zipf players, vodpack
# and then the peer in remote mode if $HOME/.cache/peer/nginx-vod holds it (benches/catalogue.rs;
# ROUNDS=3 for medians, STORE_SLOW_SHARE=0.01 for the slow tail).
catalogue:
	cargo bench --bench catalogue
