"""A lake's location, local or ``s3://bucket/prefix``, opened once as a `Lake`: the root every operation
(loads, compaction, checks, exports, queries) reads and writes through.

Without a location, the lake is ``$CHESS_LAKE``, else ``./lake`` when it exists (said on stderr) or when
the command creates it (a load); never a guess: with neither, a command that reads a lake refuses in one line.
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import sys
from dataclasses import dataclass

import pyarrow.fs as pafs

from warehouse.errors import LakeError
from warehouse.lake.layout import BEFORE, ENTRIES, GAMES, LAYOUT, LAYOUT_FILE, LOADS
from warehouse.lake.storage import filesystem, input_stream, output_stream

DEFAULT_LOCATION = "lake"
# What upgrades a lake of an earlier layout, in the one line that refuses it.
UPGRADE_COMMAND = "python -m loaders.upgrade"


NO_LAKE = "no lake named: give --lake DIR (or s3://bucket/prefix) or set CHESS_LAKE; ./lake does not exist"


def default_lake(creating: bool = False) -> str:
    """``$CHESS_LAKE`` when set and not empty, else ``./lake``, which a reader (not `creating`) uses only
    when it exists. The lake chosen is named on stderr: which lake is read is never a guess.

    :raises LakeError: when there is no lake to read (`NO_LAKE`)."""
    named = os.environ.get("CHESS_LAKE")
    if named:
        print(f"lake: {named} (CHESS_LAKE)", file=sys.stderr)
        return named
    if not creating and not os.path.isdir(DEFAULT_LOCATION):
        raise LakeError(NO_LAKE)
    print(f"lake: ./{DEFAULT_LOCATION} (no --lake, no CHESS_LAKE)", file=sys.stderr)
    return DEFAULT_LOCATION


@dataclass(frozen=True)
class Lake:
    """A lake's root on a pyarrow filesystem; every path below is relative to the root, `/`-separated."""

    fs: pafs.FileSystem
    root: str
    location: str

    @classmethod
    def open(
        cls,
        location: str | os.PathLike[str] | None = None,
        *,
        any_layout: bool = False,
        creating: bool = False,
    ) -> Lake:
        """The lake at `location` (None: `default_lake(creating)`). It may not exist yet (a load creates
        it), but a local one must not be a file, and one that exists must be of this code's layout
        (`any_layout`: of any, for the upgrade).

        A local lake's own folders and files (`layout.ENTRIES`) must not be symbolic links: one may lead
        out of the lake, or into another lake, where writing, moving and deleting the lake's files (its
        staging folder's above all) would reach data that is not the lake's.

        :raises StorageError: for an unusable location (see `storage.filesystem`).
        :raises LakeError: for a file, a lake whose own folders are links, or a lake of another layout
            (naming the command that upgrades it).
        """
        location = os.fsdecode(location) if location is not None else default_lake(creating)
        fs, root = filesystem(location)
        lake = cls(fs, root, location)
        if lake.local and fs.get_file_info(root).type == pafs.FileType.File:
            raise LakeError(f"{lake.location}: is a file, not a lake directory")
        for name in ENTRIES:
            lake.refuse_link(name)
        if not any_layout and (layout := lake.layout()) not in (None, LAYOUT):
            if layout > LAYOUT:
                raise LakeError(
                    f"{lake.location}: a lake of layout {layout}, written by a newer bgn-warehouse; "
                    f"this one reads layout {LAYOUT}: upgrade bgn-warehouse"
                )
            raise LakeError(
                f"{lake.location}: a lake of layout {layout} ({BEFORE[layout]}); upgrade it in "
                f"place with `{UPGRADE_COMMAND} --lake {lake.location}`"
            )
        return lake

    def layout(self) -> int | None:
        """The layout the lake follows: its `_layout.json`'s; 1 for a lake with data and no such file
        (lakes written before it existed); None for a new lake (nothing in it yet).

        :raises LakeError: for a layout file that cannot be read.
        """
        try:
            layout = json.loads(self.read_text(LAYOUT_FILE))["layout"]
        except FileNotFoundError:
            return 1 if self.exists(LOADS) or self.exists(GAMES) else None
        except (ValueError, KeyError, TypeError):  # not UTF-8 (UnicodeDecodeError), not JSON, no number
            layout = None
        if type(layout) is not int or layout < 1:
            raise LakeError(f'{self.location}/{LAYOUT_FILE}: damaged: expected {{"layout": {LAYOUT}}}')
        return layout

    def mark_layout(self) -> None:
        """Writes `_layout.json` for a new lake: the first operation does, before its commit."""
        if not self.exists(LAYOUT_FILE):
            self.write_text(LAYOUT_FILE, layout_text())

    @classmethod
    def open_existing(
        cls, location: str | os.PathLike[str] | None = None, *, any_layout: bool = False
    ) -> Lake:
        """A lake to check, compact or upgrade: it must hold a `_loads/` or `games/` folder (else it is a
        typo or the wrong directory, and reporting it "ok" or "nothing to do" would mislead).

        :raises LakeError: when `location` is no lake (or one of another layout, see `open`).
        """
        lake = cls.open(location, any_layout=any_layout)
        if not lake.exists(""):
            raise LakeError(f"{lake.location}: no such lake")
        if not (lake.exists(LOADS) or lake.exists(GAMES)):
            raise LakeError(f"{lake.location}: not a lake (no {LOADS}/ or {GAMES}/ in it)")
        return lake

    @property
    def local(self) -> bool:
        """On a local disk (renames, directories and locks exist), not S3."""
        return isinstance(self.fs, pafs.LocalFileSystem)

    def path(self, rel: str) -> str:
        return f"{self.root}/{rel}" if rel else self.root

    def exists(self, rel: str) -> bool:
        return self.fs.get_file_info(self.path(rel)).type != pafs.FileType.NotFound

    def files(self, rel: str) -> list[pafs.FileInfo]:
        """Files below `rel` (recursively), none when it does not exist."""
        selector = pafs.FileSelector(self.path(rel), recursive=True, allow_not_found=True)
        return [i for i in self.fs.get_file_info(selector) if i.type == pafs.FileType.File]

    def parquet_files(self, rel: str) -> list[str]:
        """The Parquet files below `rel` (recursively), relative to the root, in name order."""
        return sorted(self.relative(i.path) for i in self.files(rel) if i.path.endswith(".parquet"))

    def relative(self, path: str) -> str:
        return posixpath.relpath(path, self.root)

    def make_parent(self, rel: str) -> None:
        """Creates the folders on the way to `rel`; never through a symbolic link (see `refuse_links`)."""
        self.refuse_links(rel)
        # S3 has no directories: creating one would only leave a marker object behind.
        if self.local:
            self.fs.create_dir(posixpath.dirname(self.path(rel)), recursive=True)

    def read_text(self, rel: str) -> str:
        with input_stream(self.fs, self.path(rel)) as f:
            return f.read().decode("utf-8")

    def write_text(self, rel: str, text: str) -> None:
        """Writes `rel` so that a reader sees the old content or the whole new one, never a part: through
        a temporary name and a rename on a local disk; on S3 an object appears only once its upload is
        complete."""
        self.make_parent(rel)
        target = self.path(rel)
        tmp = f"{posixpath.dirname(target)}/.{posixpath.basename(target)}.tmp" if self.local else target
        with output_stream(self.fs, tmp) as out:
            out.write(text.encode("utf-8"))
        if tmp != target:
            self.fs.move(tmp, target)

    def move(self, src: str, dst: str) -> None:
        """A rename on a local disk; a server-side copy then a delete on S3. Never through a symbolic link
        (see `refuse_links`)."""
        self.refuse_links(src)
        self.make_parent(dst)
        self.fs.move(self.path(src), self.path(dst))

    def delete(self, rel: str) -> None:
        """Deletes the file `rel`, if there; never through a symbolic link (see `refuse_links`)."""
        self.refuse_links(rel)
        with contextlib.suppress(FileNotFoundError):
            self.fs.delete_file(self.path(rel))

    def delete_dir(self, rel: str) -> None:
        """Deletes the folder `rel` and what it holds, if there; never through a symbolic link (see
        `refuse_links`). A link inside it is deleted, not followed (pyarrow's `delete_dir`)."""
        self.refuse_links(rel)
        with contextlib.suppress(FileNotFoundError):
            self.fs.delete_dir(self.path(rel))

    def refuse_links(self, rel: str) -> None:
        """:raises LakeError: when a folder on the way from the root to `rel` (not `rel` itself: a link is
        deleted or moved as a link) is a symbolic link in a local lake, which may lead out of it."""
        folders = rel.split("/")[:-1]
        for n in range(1, len(folders) + 1):
            self.refuse_link("/".join(folders[:n]))

    def refuse_link(self, rel: str) -> None:
        """:raises LakeError: when `rel` is a symbolic link in a local lake."""
        if self.local and os.path.islink(self.path(rel)):
            raise LakeError(
                f"{self.location}/{rel}: a symbolic link inside the lake; nothing is written, moved or "
                "deleted through one: make it a folder of the lake's own"
            )


def layout_text(layout: int = LAYOUT) -> str:
    """The content of `_layout.json`."""
    return json.dumps({"layout": layout}) + "\n"
