"""Spark reads the exports for real: PySpark in local mode reads the BGN JSON-lines export (bz2, several
streams a file) with an explicit BGN schema and the Parquet lake itself (hive partitions), and the
blunders-by-piece-and-bucket analytic in PySpark, over the nested moves and over the plies table, equals
sql/blunders.sql (DuckDB) on the same games."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from warehouse import output, query
from warehouse.exports.bgn_json import export_json
from warehouse.lake import Lake

pyspark = pytest.importorskip("pyspark")
from pyspark.sql import Column, DataFrame, SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402
from pyspark.sql.types import (  # noqa: E402
    ArrayType,
    LongType,
    StringType,
    StructField,
    StructType,
)

TYPES = ("ultrabullet", "bullet", "blitz", "rapid", "classical", "correspondence", "unknown")


def strings(*names: str) -> list[StructField]:
    return [StructField(name, StringType()) for name in names]


# BGN as Spark reads it (docs/exports.md); `alt` lines are recursive, which a Spark schema cannot be:
# leaving them out of the schema skips them.
ANNOTATION = StructType(
    [
        StructField("nag", LongType()),
        StructField("eval", ArrayType(StringType())),
        StructField("clk", ArrayType(StringType())),
        StructField("comment", StringType()),
    ]
)
MOVE = StructType(
    [
        *strings("p", "f", "t", "x"),
        StructField("c", LongType()),
        *strings("castle", "promote"),
        StructField("a", ArrayType(ANNOTATION)),
    ]
)
PLAYER = StructType(
    [
        StructField("handle", StructType(strings("domain", "value"))),
        *[StructField(f"ELO_{kind}", LongType()) for kind in TYPES],
        StructField("ratingDiff", LongType()),
        StructField("title", StringType()),
    ]
)
BGN = StructType(
    [
        *strings("id", "site", "event", "type", "result", "datetime", "timeControl"),
        StructField("opening", StructType(strings("ECO", "verbose", "generic"))),
        StructField("players", ArrayType(PLAYER)),
        StructField("moves", ArrayType(MOVE)),
    ]
)


@pytest.fixture(scope="module")
def archive(sample_lake: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The JSON export, with small bz2 streams so that every file holds several, as big exports do."""
    out = tmp_path_factory.mktemp("spark") / "archive"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(output, "BZ2_CHUNK_BYTES", 64 << 10)
        export_json(Lake.open(sample_lake), out, games_per_file=150)
    blitz = (out / "blitz/2025/5/G.0.blitz.json.bz2").read_bytes()
    assert blitz.count(b"BZh91AY&SY") > 1, "expected several bz2 streams in one file"
    return out


def blunders(plies: DataFrame, nag: Column) -> set[tuple[str, str, str, int]]:
    """sql/blunders.sql's numerator in PySpark: blunders (first NAG 4) by type, upper-cased piece and ply
    bucket (the sample's blunders are all in analysed games, which blunders.sql counts)."""
    bucket = (
        F.when(F.col("ply") < 10, F.lit("<10"))
        .when(
            F.col("ply") < 200,
            F.concat((F.floor(F.col("ply") / 10) * 10).cast("int").cast("string"), F.lit("-"),
                     (F.floor(F.col("ply") / 10) * 10 + 10).cast("int").cast("string")),
        )
        .otherwise(F.lit("other"))
    )  # fmt: skip
    rows = (
        plies.where(nag == 4)
        .groupBy("type", F.upper(F.col("m.p")).alias("piece"), bucket.alias("bucket"))
        .agg(F.count("*").alias("blunders"))
        .collect()
    )
    return {(r["type"], r["piece"], r["bucket"], r["blunders"]) for r in rows}


def duckdb_blunders(lake: Path) -> set[tuple[str, str, str, int]]:
    """The rows of sql/blunders.sql with a blunder (it also gives the buckets' moves, and 0 blunders)."""
    answer = query("blunders", lake=lake).filter(pl.col("blunders") > 0)
    return set(answer.select("type", "piece", "bucket", "blunders").iter_rows())


def test_blunders_from_the_json_export(spark: SparkSession, sample_lake: Path, archive: Path) -> None:
    games = spark.read.schema(BGN).json(str(archive / "*/*/*/G.*.json.bz2"))
    assert games.count() == 438
    plies = games.select("type", F.posexplode("moves").alias("ply", "m"))
    spark_answer = blunders(plies, F.element_at(F.col("m.a"), 1)["nag"])
    expected = duckdb_blunders(sample_lake)
    assert expected, "the sample should hold blunders"
    assert spark_answer == expected


def test_json_fields_as_bgn(spark: SparkSession, archive: Path) -> None:
    games = spark.read.schema(BGN).json(str(archive / "blitz/2025/5/G.*.json.bz2"))
    first = games.where(F.col("id") == "ENPo6ReH").first()
    assert first is not None
    assert (first["result"], first["datetime"], first["opening"]["ECO"]) == (
        "B",
        "2025-05-01T00:00:06Z",
        "C46",
    )
    assert first["players"][0]["handle"]["value"] == "alanbrito4" and first["players"][0]["ELO_blitz"] == 1028
    assert first["moves"][0]["p"] == "P" and first["moves"][0]["a"][0]["clk"] == ["0:05:00"]


def test_blunders_from_the_parquet_lake(spark: SparkSession, sample_lake: Path) -> None:
    games = spark.read.parquet(str(sample_lake / "games"))
    assert {"type", "year", "month"} <= set(games.columns)
    plies = games.select("type", F.posexplode("moves").alias("ply", "m"))
    assert blunders(plies, F.col("m.nag")) == duckdb_blunders(sample_lake)


def test_partition_pruning_on_the_lake(spark: SparkSession, sample_lake: Path) -> None:
    blitz = spark.read.parquet(str(sample_lake / "games")).where(
        "type = 'blitz' and year = 2025 and month = 5"
    )
    plan = blitz._jdf.queryExecution().executedPlan().toString()
    assert "PartitionFilters" in plan and "blitz" in plan
    assert blitz.count() == 219


def test_blunders_from_the_plies_table(spark: SparkSession, sample_lake: Path) -> None:
    """The flat `plies` table in Spark: the same answer as sql/blunders.sql, and every game's plies join
    its row of `games` by `game_key`, as many as its `n_plies`."""
    plies = spark.read.parquet(str(sample_lake / "plies"))
    assert {"type", "year", "month", "game_key", "ply", "p", "nag", "clk"} <= set(plies.columns)
    assert blunders(plies.withColumn("m", F.struct("p")), F.col("nag")) == duckdb_blunders(sample_lake)
    games = spark.read.parquet(str(sample_lake / "games"))
    counts = plies.groupBy("game_key").agg(F.count("*").alias("plies"), F.max("ply").alias("last"))
    joined = games.join(counts, "game_key", "left")
    assert joined.count() == games.count() == 438
    assert joined.where("coalesce(plies, 0) != n_plies or coalesce(last, -1) != n_plies - 1").count() == 0
