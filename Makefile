# The two commands of the README:
#   make demo   set up the package, convert the bundled lichess sample into ./lake, run a query over it
#   make test   set up for the tests too, lint, and run every test (Rust unit tests and the Python suite)
PYTHON ?= python3
SAMPLE := tests/data/lichess_2025-05_sample.pgn.zst
# Where the demo writes its lake.
LAKE ?= lake
# What setup installs: this checkout, editable (built by maturin in release mode), with the duckdb CLI.
# A built wheel works too: make demo INSTALL='dist/bgn_warehouse-0.1.0-cp310-abi3-manylinux_2_34_x86_64.whl[cli]'
INSTALL ?= -e '.[cli]'

.PHONY: rust setup setup-test demo test lint bench

rust:
	@command -v cargo >/dev/null || { echo "setup needs a Rust toolchain (https://rustup.rs)"; exit 1; }

# What the package and the demo need: Python and Rust, nothing else. The install shows the build's progress
# (pip -v: cargo's lines) and is done once per PYTHON and INSTALL, recorded by a stamp in .make/: done
# again when pyproject.toml or the Rust crates change, or when PYTHON cannot import the package (another
# virtual environment). Python files need no reinstall (editable). A rebuilt wheel of the same name:
# make -B setup. (STAMP=FILE: the stamp elsewhere.)
STAMP ?= .make/setup-$(shell echo "$(PYTHON) $(INSTALL)" | cksum | cut -d' ' -f1)
ifneq ($(shell $(PYTHON) -I -c 'import warehouse._core, duckdb' 2>/dev/null && command -v duckdb),)
else
.PHONY: $(STAMP)
endif

setup: rust $(STAMP)

$(STAMP): pyproject.toml Cargo.toml Cargo.lock $(shell find crates -name '*.rs' -o -name Cargo.toml)
	$(PYTHON) -m pip install --disable-pip-version-check -v $(INSTALL)
	@mkdir -p $(@D) && touch $@

# Everything the tests need besides: their Python packages (with the duckdb CLI), a Java runtime 17+ for
# PySpark (tests/test_spark.py), Graphviz (the opening graph, tests/test_book.py) and Chromium with its
# driver (the explorer page, tests/test_serve.py), which apt-get installs when run as root. One editable
# install, one build.
setup-test: rust
	@java -version 2>&1 | grep -Eq 'version "(1[7-9]|[2-9][0-9])' || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q openjdk-17-jre-headless; \
		else \
			echo "the tests need Java 17+ for PySpark: install it (e.g. sudo apt-get install openjdk-17-jre-headless)"; exit 1; \
		fi; }
	@command -v dot >/dev/null || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q graphviz; \
		else \
			echo "the tests need Graphviz's dot for the opening graph: install it (e.g. sudo apt-get install graphviz)"; exit 1; \
		fi; }
	@{ command -v chromium && command -v chromedriver; } >/dev/null || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver; \
		else \
			echo "the tests need Chromium and its driver for the explorer page: install them (e.g. sudo apt-get install chromium chromium-driver)"; exit 1; \
		fi; }
	$(PYTHON) -m pip install --disable-pip-version-check -v -e '.[test]'
	@# The CLI's httpfs, for S3 lakes (tests/test_sql_s3.py); --no-deps: the package declares a Python duckdb
	@# of its own version, which the project does not use.
	$(PYTHON) -m pip install --disable-pip-version-check -q --no-deps duckdb-extension-httpfs==1.5.5
	$(PYTHON) -m warehouse.extensions

demo: setup
	@if grep -qs '"$(SAMPLE)"' $(LAKE)/_loads/*.json; then \
		echo "$(SAMPLE) is already in $(LAKE)"; \
	else \
		$(PYTHON) -m loaders.pgn2parquet $(SAMPLE) --lake $(LAKE); \
	fi
	CHESS_LAKE=$(LAKE) duckdb < sql/summary.sql

lint:
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	cargo fmt --all --check
	$(PYTHON) -m ruff check warehouse loaders tests bench
	$(PYTHON) -m ruff format --check warehouse loaders tests bench
	$(PYTHON) -m mypy

test: setup-test lint
	cargo test --workspace --quiet
	$(PYTHON) -m pytest -q -n $(or $(PYTEST_WORKERS),2) --dist loadfile --durations=15

bench: setup-test
	$(PYTHON) bench/bench_load.py
