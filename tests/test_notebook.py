"""The teaching notebook in examples/ runs end to end, and is kept without outputs.

The notebook is executed with nbclient in a fresh kernel of this interpreter
(through a kernel spec made for the test, so another Python's ``python3``
kernel cannot be picked up), in a temporary folder, and every cell must run
without an error. Its outputs are then read for what its text teaches: 40
trials leave the 20-point gain undecided, the sequential comparison decides it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "is_v2_better.ipynb"


def _outputs(cell) -> str:
    """Everything a cell showed, as text: streams, plain and HTML displays, errors."""
    parts = []
    for out in cell.get("outputs", []):
        if out["output_type"] == "stream":
            parts.append(out["text"])
        elif out["output_type"] in ("execute_result", "display_data"):
            parts += [str(out["data"].get(k, "")) for k in ("text/plain", "text/html")]
        elif out["output_type"] == "error":
            parts.append(f"{out['ename']}: {out['evalue']}")
    return "\n".join(parts)


def test_the_notebook_is_committed_without_outputs():
    import nbformat

    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, "the notebook has code"
    for cell in code:
        assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]


@pytest.mark.slow
def test_the_notebook_runs_end_to_end_without_an_error(tmp_path, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    kernels = tmp_path / "jupyter" / "kernels" / "evalstats-test"
    kernels.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "evalstats test",
        "language": "python",
    }
    (kernels / "kernel.json").write_text(json.dumps(spec))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the notebook's own folder goes here
    monkeypatch.setenv("MPLBACKEND", "Agg")
    work = tmp_path / "cwd"
    work.mkdir()

    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(
        nb,
        timeout=180,
        kernel_name="evalstats-test",
        resources={"metadata": {"path": str(work)}},
    )
    client.execute()  # raises CellExecutionError, naming the cell, on the first error

    code = [c for c in nb.cells if c.cell_type == "code"]
    shown = [_outputs(c) for c in code]
    for cell, text in zip(code, shown, strict=True):
        assert all(o["output_type"] != "error" for o in cell.outputs), text
        assert "Traceback" not in text and "Warning" not in text, text
    everything = "\n".join(shown)
    # 40 trials per version: the 20-point gain is not decided, and says so.
    ten = next(t for t in shown if "B=v2 against A=v1" in t)
    assert "verdict: can't tell yet" in ten and "would usually detect" in ten
    # The rich display carries the verdict in its headline.
    assert "<strong" in ten and "can&#x27;t tell yet" in ten
    # The sequential comparison reaches the verdict on the longer run.
    seq = next(t for t in shown if "anytime-valid" in t)
    assert seq.startswith("B better") and "decided after" in seq
    # Both figures were drawn and shown.
    images = [o for c in code for o in c.outputs if "image/png" in o.get("data", {})]
    assert len(images) == 2
    assert "false 'B better'" in everything
