"""Fixtures of the whole test run: the repository, the bundled sample and a lake of it loaded once, the
corpora's loads (shared by test_oracle_corpora and test_export_pgn), a moto S3 server per module that
asks for one, and a small tmpfs for full-disk tests. Helpers that are not fixtures are in support.py."""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from corpora import CorpusLoad, CorpusLoader, corpus_loader
from random_variants import BOARDS, random_games, write_pgn
from s3_server import S3Server, moto_server
from support import REPO, SAMPLE, loaded, run_command


@pytest.fixture(scope="session")
def repo() -> Path:
    """The repository's root (commands run from there)."""
    return REPO


@pytest.fixture(scope="session")
def sample() -> Path:
    """tests/data/lichess_2025-05_sample.pgn.zst: 438 lichess games of May 2025, in two zstd frames."""
    return SAMPLE


@pytest.fixture(scope="session")
def sample_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample loaded by the real loader into a lake, once for the whole run. Read it only: a test
    that changes a lake copies this one or loads its own."""
    return loaded([SAMPLE], tmp_path_factory.mktemp("sample") / "lake")


def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's temporary folder, shared by its parallel workers (each has its own below it)."""
    root = tmp_path_factory.getbasetemp()
    return root.parent if "PYTEST_XDIST_WORKER" in os.environ else root


@pytest.fixture(scope="session")
def corpus_loads(tmp_path_factory: pytest.TempPathFactory) -> CorpusLoader:
    """`corpus_loads(inputs)`: the loader's run on those corpus files into a lake of its own, once per run
    for the same inputs, whichever parallel worker asks first (see corpora.py). Read its lake only."""
    return corpus_loader(run_folder(tmp_path_factory) / "corpus")


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """PySpark in local mode, one session a run (a JVM starts slowly): two threads, and a task that
    fails is run once more (`local[2,2]`), as a cluster retries it (test_spark_load injects a failure)."""
    pyspark_sql = pytest.importorskip("pyspark.sql")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    session = (
        pyspark_sql.SparkSession.builder.master("local[2,2]")
        .appName("bgn-warehouse-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


GAMES_PER_VARIANT = 200


@pytest.fixture(scope="session")
def random_variant_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A PGN file of `GAMES_PER_VARIANT` seeded random games per lichess variant (random_variants.py),
    by variant name: written once a run, by whichever parallel worker asks first (python-chess takes ~20
    s to play them), under a lock as `corpus_loads`; the same paths, so their load is shared too. Read
    them only."""
    folder = run_folder(tmp_path_factory) / "random_variants"
    files = {v: folder / f"{v.lower().replace(' ', '_')}.pgn" for v in BOARDS}
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or its process ends
        if not (folder / "written").exists():
            for variant, path in files.items():
                write_pgn(path, random_games(variant, GAMES_PER_VARIANT, seed=1))
            (folder / "written").touch()
    return files


@pytest.fixture(scope="session")
def random_variant_load(random_variant_files: dict[str, Path], corpus_loads: CorpusLoader) -> CorpusLoad:
    """The random variant games loaded into one lake by the real loader, once per run."""
    return corpus_loads(tuple(random_variant_files.values()))


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 512 KiB tmpfs, unmounted after the test; skipped where mounting is not allowed."""
    mount_point = tmp_path / "mnt"
    mount_point.mkdir()
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("needs root and mount(8) for a size-limited file system")
    made = run_command(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount_point)])
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()}")
    try:
        yield mount_point
    finally:
        run_command(["umount", "-l", str(mount_point)])


@pytest.fixture(scope="module")
def s3_server() -> Iterator[S3Server]:
    """A moto S3 server while the module runs (see s3_server.py)."""
    with moto_server() as server:
        yield server
