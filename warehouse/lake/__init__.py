"""The lake on disk or S3, owned here: where it is (`location`, `storage`), what lies where (`layout`), its
Parquet files (`parquet`), its commit records (`records`), the commit protocol (`commit`) and the game id
index (`dedup`). Every operation opens a lake one way: `Lake.open(location)`."""

from warehouse.lake.layout import Partition
from warehouse.lake.location import Lake, default_lake

__all__ = ["Lake", "Partition", "default_lake"]
