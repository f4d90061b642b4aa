"""What the export commands share: the lake and selection options, and user errors as one line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TypeVar

from warehouse.lake import default_lake
from warehouse.lake_scan import LakeError, Selection
from warehouse.storage import StorageError

T = TypeVar("T")


def add_selection_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--lake",
        default=None,
        help="lake directory or s3://bucket/prefix (default: $CHESS_LAKE, else ./lake); S3 credentials, "
        "region and endpoint come from the AWS_* environment variables",
    )
    p.add_argument(
        "--type",
        action="append",
        dest="types",
        metavar="TYPE",
        help="only games of this speed (ultrabullet, bullet, blitz, rapid, classical, correspondence, "
        "unknown); repeat for several",
    )
    p.add_argument(
        "--year", action="append", dest="years", type=int, metavar="YYYY", help="only this year; repeatable"
    )
    p.add_argument(
        "--month",
        action="append",
        dest="months",
        type=int,
        metavar="M",
        help="only this month (1-12); repeatable",
    )


def lake_location(lake: str | None) -> str:
    return lake or default_lake()


def selection(args: argparse.Namespace) -> Selection:
    return Selection(types=args.types, years=args.years, months=args.months)


def run_export(export: Callable[[], T]) -> T | None:
    """`export()`, or None after printing a one-line error for what a user can get wrong (a missing lake,
    a bad S3 URL, an output that exists, an unreachable server)."""
    try:
        return export()
    except (LakeError, StorageError, FileExistsError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
    except OSError as e:
        print(f"error: {e.strerror or str(e).splitlines()[0]}", file=sys.stderr)
    except KeyboardInterrupt:
        print("interrupted: no partial file was left", file=sys.stderr)
    return None
