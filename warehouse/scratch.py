"""Scratch files the Rust reader reads by path: text made for it (the openings table, a JSON import's PGN).

Nothing may be left outside the place the user named, even by a process killed with SIGKILL, which runs no
clean-up. So where the system has anonymous files in memory (Linux's `memfd_create`, and `/proc` to open
one by), a scratch file is one, opened by the reader as `/proc/self/fd/N`: it goes with the process whatever
ends it. Elsewhere it is a file in a temporary folder, deleted by `discard` (a kill leaves that one behind).
"""

from __future__ import annotations

import os
import tempfile
from typing import IO

# Anonymous files, and a path to open one by (a container without /proc has the call but no path).
IN_MEMORY = hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd")


class ScratchFile:
    """A file named `name` to write (`out`, binary), then read by path (`path`) until `discard`."""

    def __init__(self, name: str):
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        self._fd: int | None = None
        if IN_MEMORY:
            self._fd = os.memfd_create(name)
            self.path = f"/proc/self/fd/{self._fd}"
            # `out` writes through its own descriptor: closing it leaves the file, held by `_fd`.
            self.out: IO[bytes] = os.fdopen(os.dup(self._fd), "wb")
        else:
            self._folder = tempfile.TemporaryDirectory(prefix="bgn-scratch-")
            self.path = os.path.join(self._folder.name, name)
            self.out = open(self.path, "wb")  # noqa: SIM115 (closed by `discard`)

    def discard(self) -> None:
        """Deletes the file (closing `out` if it is open). Idempotent."""
        self.out.close()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None
