"""The DAG drawn with what crossed its edges: the DOT of ``dag.to_dot()`` with a label per edge (pure Python).

``jetspark run --measured`` and the web page draw the same picture: :func:`edge_counts` reads, per edge, the
items its source vertex emitted on the edge's source ordinal (Jet's ``emittedCount``), :func:`labelled_dot`
puts one label on each edge line (in front of a routing label if the edge has one), and :func:`to_svg`
(``dag.graph``) turns the text into SVG. Windowing vertices already carry their policy in ``to_dot()``'s
vertex label.

>>> from dag import DAG
>>> from edges import between
>>> from processors import noop_p
>>> d = DAG(); a = d.new_vertex("a", noop_p()); b = d.new_vertex("b", noop_p()); _ = d.edge(between(a, b))
>>> print(labelled_dot(d, ["7 items"]).splitlines()[3].strip())
"a" -> "b" [label="7 items", queueSize=1024];
"""

from __future__ import annotations

from typing import Any

from dag.runtime.common.metrics import EMITTED

__all__ = ["edge_counts", "labelled_dot", "count_label"]


def edge_counts(dag: Any, metrics: Any) -> list[tuple[Any, int]]:
    """Each edge of ``dag`` (in ``to_dot()``'s order) with the items its source vertex emitted on the edge's
    ordinal (``metrics``: a ``JobMetrics``)."""
    out = []
    for vertex in dag:
        for edge in dag.get_outbound_edges(vertex.name):
            count = sum(p[EMITTED].get(edge.source_ordinal, 0) for p in metrics[vertex.name].values()) \
                if vertex.name in metrics else 0
            out.append((edge, count))
    return out


def count_label(count: int, rate: float | None) -> str:
    """``"1,200 items, 300/s"`` (no rate when ``rate`` is None)."""
    return f"{count:,} items" + ("" if rate is None else f", {rate:,.0f}/s")


def labelled_dot(dag: Any, labels: list[str]) -> str:
    """``dag.to_dot()`` with ``labels[i]`` on the i-th edge line (the order of :func:`edge_counts`); a label is
    DOT-escaped (``"`` and ``\\``)."""
    lines = dag.to_dot().split("\n")
    texts = iter(labels)
    for i, line in enumerate(lines):
        if " -> " not in line:
            continue
        text = next(texts).replace("\\", "\\\\").replace('"', '\\"')
        if 'label="' in line:
            lines[i] = line.replace('label="', f'label="{text}\\n', 1)
        else:
            lines[i] = line.replace("[", f'[label="{text}", ', 1)
    return "\n".join(lines)
