"""``examples/word_count.ipynb`` runs top to bottom in a real kernel (nbclient + ipykernel) and shows the DAG
and the plan as SVG and the finished job as an HTML table. The kernel starts its own Spark (local[2]) and
closes it in the notebook's last cell; nbclient shuts the kernel down in any case."""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _outputs(cell) -> dict[str, str]:
    """The cell's rich outputs by MIME type (execute results and displays)."""
    out: dict[str, str] = {}
    for output in cell.outputs:
        out.update(output.get("data", {}))
    return out


@pytest.mark.slow
def test_word_count_notebook_when_executed_then_dag_plan_and_job_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    # the kernel spec runs `python`: the one of this environment
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    notebook = nbformat.read(EXAMPLES / "word_count.ipynb", as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(EXAMPLES)}}).execute()
    code = [c for c in notebook.cells if c.cell_type == "code"]
    shown = {c.source.splitlines()[-1]: _outputs(c) for c in code}
    assert ">tokenize</text>" in shown["dag"]["image/svg+xml"]
    assert ">Stage 0 (" in shown["plan"]["image/svg+xml"]
    job = shown["job"]["text/html"]
    assert "<b>COMPLETED</b>" in job and "<td>combine</td>" in job and "word-count" in job
    top = ast.literal_eval(shown['word_count.top_words(dict(engine.get_map("counts")), 5)']["text/plain"])
    assert len(top) == 5 and all(isinstance(w, str) and n > 0 for w, n in top)
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
