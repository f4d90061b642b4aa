"""Scratch space: files the Rust reader reads by path (the openings table, a JSON import's PGN), and a
folder of this process's own for what must be files (DuckDB's spill).

Nothing may be left outside the place the user named, even by a process killed with SIGKILL, which runs no
clean-up. So where the system has anonymous files in memory (Linux's `memfd_create`, and `/proc` to open
one by), a scratch file is one, opened by the reader as `/proc/self/fd/N`: it goes with the process whatever
ends it. What cannot be in memory goes to `process_folder()`, in the system's temporary folder: removed
when the process exits, and, when a kill left it, by the next process that makes its own.
"""

from __future__ import annotations

import atexit
import fcntl
import itertools
import os
import shutil
import tempfile
import threading
import time
from typing import IO

# Anonymous files, and a path to open one by (a container without /proc has the call but no path).
IN_MEMORY = hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd")
# A process folder's name starts so; while it is being made (not yet locked), with MAKING.
PREFIX = "bgn-scratch-"
MAKING = "bgn-making-"
# The file in a process folder its process holds an exclusive `flock` on while it lives: the kernel lets go
# of it however the process ends, so a folder whose lock can be taken is one nobody uses.
LOCK = ".owner"
# A folder still under MAKING's name this long after it changed was left by a kill while it was made.
HALF_MADE_SECONDS = 60

_made: dict[str, str] = {}
_making = threading.Lock()
_numbers = itertools.count()


def process_folder() -> str:
    """This process's private folder (0700) in the system's temporary folder, made at first call, removed
    at exit. Making it first removes the folders processes killed before they could remove their own."""
    with _making:
        if "folder" not in _made:
            remove_left_folders()
            _made["folder"] = _locked_folder()
        return _made["folder"]


def new_folder_path(name: str) -> str:
    """A path in `process_folder()` no one has used yet, for a folder its user makes and removes (DuckDB
    makes its `temp_directory` when it first spills and removes it when the connection closes)."""
    # The pid too: a forked child numbers from where its parent was, in its parent's folder.
    return os.path.join(process_folder(), f"{name}-{os.getpid()}-{next(_numbers)}")


def _locked_folder() -> str:
    # Made and locked under another prefix, then renamed: `remove_left_folders` never sees a folder whose
    # owner has not yet taken its lock.
    making = tempfile.mkdtemp(prefix=f"{MAKING}{os.getpid()}-")
    lock = os.open(os.path.join(making, LOCK), os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    parent, name = os.path.split(making)
    folder = os.path.join(parent, name.replace(MAKING, PREFIX, 1))
    os.rename(making, folder)
    atexit.register(_remove, folder, lock, os.getpid())
    return folder


def _remove(folder: str, lock: int, owner: int) -> None:
    if os.getpid() == owner:  # not in a forked child, whose exit must leave its parent's folder
        shutil.rmtree(folder, ignore_errors=True)
        os.close(lock)


def remove_left_folders() -> list[str]:
    """Removes this user's process folders in the system's temporary folder that no live process holds
    (their process was killed, or killed while removing its own), and folders left half-made more than
    `HALF_MADE_SECONDS` ago (a kill between `mkdtemp` and the lock); returns them."""
    removed = []
    with os.scandir(tempfile.gettempdir()) as entries:
        for entry in entries:
            if not entry.name.startswith((PREFIX, MAKING)) or not entry.is_dir(follow_symlinks=False):
                continue
            stat = entry.stat(follow_symlinks=False)
            if stat.st_uid != os.getuid():
                continue
            if entry.name.startswith(MAKING):
                left = time.time() - stat.st_mtime > HALF_MADE_SECONDS
            else:
                left = _nobody_holds(entry.path)
            if left:
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(entry.path)
    return removed


def _nobody_holds(folder: str) -> bool:
    """Whether no live process holds the process folder `folder`: its lock can be taken, or is gone."""
    try:
        lock = os.open(os.path.join(folder, LOCK), os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        # A process folder has its lock from before it had its name: without it, its owner was removing it
        # and was killed doing so.
        return True
    except OSError:
        return False
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False  # its process lives
    finally:
        os.close(lock)
    return True


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
            self._folder = tempfile.TemporaryDirectory(prefix="file-", dir=process_folder())
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
