# The two commands of the README:
#   make demo   set up, convert the bundled lichess sample into ./lake, run a query over it
#   make test   set up, lint, and run every test (Rust unit tests and the Python suite)
PYTHON ?= python3
SAMPLE := tests/data/lichess_2025-05_sample.pgn.zst

.PHONY: setup demo test lint bench

# Python deps, the duckdb CLI and the Rust extension (built in release mode by maturin).
setup:
	@command -v cargo >/dev/null || { echo "setup needs a Rust toolchain (https://rustup.rs)"; exit 1; }
	@# PySpark (tests/test_spark.py) needs a Java runtime, 17 or later: apt-get installs one when run as root.
	@java -version 2>&1 | grep -Eq 'version "(1[7-9]|[2-9][0-9])' || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q openjdk-17-jre-headless; \
		else \
			echo "setup needs Java 17+ for PySpark: install it (e.g. sudo apt-get install openjdk-17-jre-headless)"; exit 1; \
		fi; }
	$(PYTHON) -m pip install --disable-pip-version-check -q -e '.[test]'

demo: setup
	@if grep -qs '"$(SAMPLE)"' lake/_loads/*.json; then \
		echo "$(SAMPLE) is already in ./lake"; \
	else \
		$(PYTHON) -m loaders.pgn2parquet $(SAMPLE) --lake lake; \
	fi
	CHESS_LAKE=lake duckdb < sql/summary.sql

lint:
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	cargo fmt --all --check
	$(PYTHON) -m ruff check warehouse loaders tests bench
	$(PYTHON) -m ruff format --check warehouse loaders tests bench
	$(PYTHON) -m mypy

test: setup lint
	cargo test --workspace --quiet
	$(PYTHON) -m pytest -q

bench: setup
	$(PYTHON) bench/bench_load.py
