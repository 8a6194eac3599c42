"""Watching jobs: a live web page of the engine's jobs, Prometheus' ``/metrics``, and a job in a notebook.

``EngineConfig(web_ui_port=0)`` (or a fixed port) makes the engine start :class:`WebUI` (``server.py``): a
small read-only HTTP server of the standard library, bound to loopback in local mode, that answers only
requests carrying the engine's random token (``engine.web_ui_url`` includes it). The pieces, one topic each:

- ``figures.py``: :class:`~dag.runtime.webui.figures.JobWatch`, everything shown of one job as JSON-ready
  data (counts, rates over the last seconds, queue fill, watermark lag, snapshots, restarts, Spark stages of
  a batch job, the processors' last log records), from ``job.metrics()`` and the job's own bookkeeping;
- ``drawing.py``: the DAG's DOT with items and rates on the edges (also ``jetspark run --measured``);
- ``html.py``, ``app.js``, ``style.css``: the pages (shells the script fills with ``textContent``, polling
  once a second) and ``Job._repr_html_``;
- ``prometheus.py``: the ``/metrics`` collector, reading live figures on each scrape.

A ``DAG``, a physical plan and a ``Pipeline`` draw themselves in a notebook through ``dag.graph.repr_svg``.
"""

from dag.runtime.webui.server import WebUI

__all__ = ["WebUI"]
