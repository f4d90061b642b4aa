"""Every notebook of notebooks/ runs top to bottom in a real Jupyter kernel, and is committed without
outputs."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from support import REPO

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
SECONDS_PER_CELL = 60


@pytest.fixture(autouse=True)
def kernel_environment(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The kernel imports this checkout's warehouse, whatever is installed, and draws without a display.
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(repo), path])))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    # jupyter_core warns (DeprecationWarning) until it is told to use platformdirs' folders.
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_runs(path: Path) -> None:
    from nbclient import NotebookClient  # imported here: it reads JUPYTER_PLATFORM_DIRS on import

    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=SECONDS_PER_CELL,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()  # raises CellExecutionError on the first cell that fails
    figures = [
        output
        for cell in notebook.cells
        for output in cell.get("outputs", [])
        if "image/png" in output.get("data", {})
    ]
    assert figures, f"{path.name} drew nothing"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_committed_without_outputs(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(not cell.outputs and cell.execution_count is None for cell in code)


def test_there_is_a_notebook_per_theme() -> None:
    themes = {"blunders", "castling", "clock_pace", "openings", "ratings"}
    assert themes <= {path.stem for path in NOTEBOOKS}
