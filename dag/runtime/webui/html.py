"""The HTML of the web page and of a job in a notebook; every value that a user controls is escaped here.

The pages are shells: the server writes the page's frame (the title, empty tables, the token the script
sends back as ``Authorization: Bearer``) and ``app.js`` fills the tables from the JSON endpoints with
``textContent`` (never as markup), once a second while the job runs. The only markup inserted is the DAG's
SVG, which graphviz wrote (it escapes the names it draws); the script fetches it once and then rewrites its
edge labels in place, fetching it again only when a label outgrew the room graphviz laid out for it (so an
open page costs one JSON look a second, not a graphviz run). A job name appears in the server-written frame only
through :func:`html.escape`. :func:`job_table` is ``Job._repr_html_``: the job's status and its vertices'
counts as a static table.

>>> page = job_page("t0k", 3, 'x<script>alert("hi")</script>')
>>> "<script>alert" in page, "x&lt;script&gt;alert(&quot;hi&quot;)" in page
(False, True)
"""

from __future__ import annotations

import datetime
from html import escape
from typing import Any

__all__ = ["index_page", "job_page", "job_table"]

_HEAD = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<link rel="stylesheet" href="/static/style.css?token={token}">
<script src="/static/app.js?token={token}" defer></script></head>
"""


def index_page(token: str) -> str:
    """The list of the engine's jobs (filled by ``app.js`` from ``/api/jobs``)."""
    t = escape(token, quote=True)
    return _HEAD.format(title="jetspark jobs", token=t) + f"""<body data-page="index" data-token="{t}">
<h1>jetspark jobs</h1>
<table id="jobs"><thead><tr><th>id</th><th>name</th><th>status</th><th>submitted</th><th>ended</th>
<th>guarantee</th><th>mode</th></tr></thead><tbody></tbody></table>
<p class="note" id="updated"></p>
</body></html>
"""


def job_page(token: str, job_id: int, name: str) -> str:
    """One job's page (filled by ``app.js`` from ``/api/jobs/<id>`` and ``/api/jobs/<id>/dag.svg``)."""
    t, n = escape(token, quote=True), escape(name, quote=True)
    return _HEAD.format(title=f"jetspark job {n}", token=t) + f"""<body data-page="job" data-token="{t}" \
data-job="{int(job_id)}">
<p><a href="/?token={t}">all jobs</a></p>
<h1>Job <span id="name">{n}</span></h1>
<p id="summary"></p>
<div id="dag" class="dag"></div>
<h2>Vertices <span class="note" id="rates"></span></h2>
<table id="vertices"><thead><tr><th>vertex</th><th>processors</th><th>received</th><th>received/s</th>
<th>emitted</th><th>emitted/s</th><th>queues</th><th>watermark</th><th>watermark lag</th></tr></thead>
<tbody></tbody></table>
<h2>Edges</h2>
<table id="edges"><thead><tr><th>from</th><th>to</th><th>items</th><th>items/s</th></tr></thead><tbody></tbody></table>
<h2>Snapshots and restarts</h2>
<p id="snapshot"></p>
<table id="restarts"><thead><tr><th>time</th><th>cause</th><th>restored</th></tr></thead><tbody></tbody></table>
<section id="stages-section"><h2>Spark stages</h2>
<table id="stages"><thead><tr><th>stage</th><th>tasks done</th><th>running</th><th>tasks</th></tr></thead>
<tbody></tbody></table></section>
<h2>Latest log records of the processors</h2>
<table id="logs"><thead><tr><th>time</th><th>logger</th><th>level</th><th>message</th></tr></thead><tbody></tbody>
</table>
<p class="note" id="updated"></p>
</body></html>
"""


def _when(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return datetime.datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M:%S")


def job_table(job: Any) -> str:
    """The job's status and a table of its vertices' metrics, as static HTML (``Job._repr_html_``).

    Counts of a running pipelined job are live; a finished job's are final, with its average rates.
    """
    from dag.runtime.webui.figures import JobWatch

    look = JobWatch(job).look()
    ended = f", ended {_when(look['completed'])}" if look["completed"] else ""
    rows = []
    for v in look["vertices"]:
        cells = [v["name"], v["parallelism"], f"{v['received']:,}", f"{v['emitted']:,}",
                 "" if v["emitted_rate"] is None else f"{v['emitted_rate']:,.0f}",
                 "" if v["watermark_lag"] is None else f"{v['watermark_lag']:.1f} s"]
        rows.append("<tr>" + "".join(f"<td>{escape(str(c if c is not None else ''))}</td>" for c in cells)
                    + "</tr>")
    snapshot = look["snapshot"]
    extra = "" if snapshot is None else (f"<br>last snapshot {snapshot['id']} ({snapshot['size_bytes']:,} bytes, "
                                         f"{snapshot['duration_seconds']:.2f} s), {look['restarts']} restart(s)")
    return (f"<div class=\"jetspark-job\"><b>Job {escape(look['name'])}</b> (id {look['id']}): "
            f"<b>{escape(look['status'])}</b>, {escape(look['mode'])}, guarantee {escape(look['guarantee'])}, "
            f"submitted {_when(look['submitted'])}{ended}{extra}"
            "<table><thead><tr><th>vertex</th><th>processors</th><th>received</th><th>emitted</th>"
            f"<th>emitted/s ({escape(look['rates_kind'])})</th><th>watermark lag</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table></div>")
