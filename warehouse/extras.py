"""The optional extras of pyproject.toml, by the module each brings: a command that needs a module of one
says which extra to install in one line (loaders/cli.py `run`), and a path with a fallback asks whether
it is here."""

from __future__ import annotations

import importlib.util

# The top-level module -> (what a user knows it as, the extra of pyproject.toml that installs it).
EXTRAS = {"chess": ("python-chess", "chess"), "pyspark": ("pyspark", "spark")}


def installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def missing(error: ModuleNotFoundError, command: str) -> str | None:
    """The one line saying which extra `command` needs, when `error` is a module of an extra; None for any
    other missing module (a broken install, which keeps its traceback)."""
    found = EXTRAS.get((error.name or "").partition(".")[0])
    if found is None:
        return None
    package, extra = found
    return f"{command} needs {package}: pip install 'bgn-warehouse[{extra}]'"
