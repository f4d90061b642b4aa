"""Every notebook of notebooks/ runs top to bottom in a real Jupyter kernel on the lake CHESS_LAKE names (a
copy of the run's sample lake: the positions notebook writes the position index into it), and is committed
without outputs; without CHESS_LAKE a notebook reads the bundled sample, saying so."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import nbformat
import pytest
from support import REPO

from warehouse.queries.sample import lake_or_sample, shared_sample_lake

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
SECONDS_PER_CELL = 60


@pytest.fixture(scope="module")
def own_lake(sample_lake: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's lake: the run's sample lake, copied (the run's one is read only)."""
    lake = tmp_path_factory.mktemp("notebooks") / "my lake"
    shutil.copytree(sample_lake, lake)
    return lake


@pytest.fixture(autouse=True)
def kernel_environment(repo: Path, own_lake: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The kernel imports this checkout's warehouse, whatever is installed, and draws without a display.
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(repo), path])))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("CHESS_LAKE", str(own_lake))
    # jupyter_core warns (DeprecationWarning) until it is told to use platformdirs' folders.
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_runs(path: Path, own_lake: Path) -> None:
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
    printed = "".join(output.get("text", "") for output in notebook.cells[1].get("outputs", []))
    assert printed == f"lake: {own_lake} (CHESS_LAKE)\n", f"{path.name} must read the lake CHESS_LAKE names"


def test_without_chess_lake_a_notebook_reads_the_sample(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The sample is loaded once into one lake of the system's temporary folder, which every notebook opened
    without CHESS_LAKE then reads (a new temporary lake each time left one more folder behind)."""
    monkeypatch.delenv("CHESS_LAKE")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    lakes = {lake_or_sample() for _ in range(2)}
    assert capsys.readouterr().out.count("lake: the bundled sample") == 2
    assert [Path(lake).parent for lake in lakes] == [tmp_path] and len(list(tmp_path.iterdir())) == 1
    (lake,) = lakes
    assert sum(1 for _ in (Path(lake) / "_loads").glob("*.json")) == 1


def test_the_sample_lake_is_not_read_through_a_link(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The shared sample lake's name in the system's temporary folder (everyone's) held by a link: the link
    is not followed (the sample would be written where it leads), a new folder of its own is used."""
    monkeypatch.delenv("CHESS_LAKE")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = shared_sample_lake()  # made, empty, by asking its name: a link put there instead
    link.rmdir()
    link.symlink_to(elsewhere)
    lake = Path(lake_or_sample())
    assert lake.parent == tmp_path and lake != link and not lake.is_symlink()
    assert not list(elsewhere.iterdir())
    assert sum(1 for _ in (lake / "_loads").glob("*.json")) == 1


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_committed_without_outputs(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(not cell.outputs and cell.execution_count is None for cell in code)


def test_there_is_a_notebook_per_theme() -> None:
    themes = {"blunders", "castling", "clock_pace", "openings", "ratings"}
    assert themes <= {path.stem for path in NOTEBOOKS}
