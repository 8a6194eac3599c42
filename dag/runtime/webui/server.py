"""The web UI's HTTP server: the standard library's ``ThreadingHTTPServer``, read-only, token-checked first.

:class:`WebUI` is started by the engine when ``EngineConfig.web_ui_port`` is not None and stopped by
``engine.close()``. It binds to ``127.0.0.1`` in local mode (to ``spark.driver.host`` on a cluster: the
address the executors already reach the driver on). A random token per engine (``secrets.token_urlsafe``)
must come with every request, as the query parameter ``?token=`` or the header ``Authorization: Bearer
TOKEN``; it is compared with ``hmac.compare_digest`` before the path is even looked at, and a request without
it gets ``403`` with an empty body, whatever it asked for. Nothing the server does changes a job.

Routes (``GET`` and ``HEAD``; with the token, any other method gets 405):

=============================  ===================================================================
``/``                          the engine's jobs (HTML; refreshed by ``app.js``)
``/jobs/<id>``                 one job's page (HTML)
``/api/jobs``                  the jobs' summaries (JSON)
``/api/jobs/<id>``             one job's figures (JSON, see ``figures.py``)
``/api/jobs/<id>/dag.svg``     its DAG with items and rates on the edges (SVG)
``/metrics``                   Prometheus' text format (``prometheus.py``)
``/static/app.js``, ``.css``   the page's script and style
=============================  ===================================================================

Responses carry ``Cache-Control: no-store``, ``X-Content-Type-Options: nosniff`` and a Content Security Policy
that allows only this server's own script and style. The server logs no request line (the token is in it).
"""

from __future__ import annotations

import errno
import hmac
import json
import secrets
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from jetspark_base.errors import WebUIError
from dag.runtime.webui import html
from dag.runtime.webui.figures import JobWatch

__all__ = ["WebUI"]

_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
_STATIC = {"/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
           "/static/style.css": ("style.css", "text/css; charset=utf-8")}


class WebUI:
    """The web page and ``/metrics`` of one engine (see the module docstring).

    ``jobs``: returns the engine's jobs, oldest first (``engine.get_jobs``); ``host``/``port``: where to listen
    (port 0: any free port). Raises :class:`~dag.errors.WebUIError` when the port cannot be bound.
    """

    def __init__(self, jobs: Any, host: str, port: int):
        self._jobs = jobs
        self.token = secrets.token_urlsafe(32)
        self._watches: dict[int, JobWatch] = {}
        self._lock = threading.Lock()
        try:
            self._server = ThreadingHTTPServer((host, port), _handler(self))
        except OSError as exc:
            taken = exc.errno == errno.EADDRINUSE
            raise WebUIError(
                f"web UI: cannot listen on {host}:{port}: "
                + (f"port {port} is already in use; set EngineConfig.web_ui_port to a free port, or to 0 for any "
                   "free port" if taken else f"{exc.strerror or exc}; check EngineConfig.web_ui_port and the "
                   "driver's host (spark.driver.host)")) from exc
        self._server.daemon_threads = True
        self.host, self.port = host, self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="jetspark-webui", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """The page's address with the token (``http://127.0.0.1:PORT/?token=...``)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/?token={self.token}"

    def close(self) -> None:
        """Stop serving and release the port (idempotent; waits at most a few seconds)."""
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join(5)
        self._server.server_close()

    # ------------------------------------------------------------------ what the routes read
    def watch(self, job_id: int) -> JobWatch | None:
        """The :class:`JobWatch` of the engine's job ``job_id`` (kept, so its rate samples survive), or None."""
        job = next((j for j in self._jobs() if j.id == job_id), None)
        if job is None:
            return None
        with self._lock:
            return self._watches.setdefault(job_id, JobWatch(job))

    def summaries(self) -> list[dict[str, Any]]:
        """Every job's line on the index page, oldest first."""
        return [w.summary() for w in (self.watch(job.id) for job in self._jobs()) if w is not None]

    def newest_looks(self) -> list[dict[str, Any]]:
        """A look at the newest job of every name (what ``/metrics`` exposes)."""
        newest = {job.name: job for job in self._jobs()}
        return [w.look() for w in (self.watch(job.id) for job in newest.values()) if w is not None]

    def authorized(self, headers: Any, query: dict[str, list[str]]) -> bool:
        """Whether the request carries the token (query ``token`` or ``Authorization: Bearer``)."""
        given = query.get("token", [""])[-1]
        auth = headers.get("Authorization") or ""
        if auth[:7].lower() == "bearer ":
            given = auth[7:].strip()
        return hmac.compare_digest(given.encode("utf-8", "replace"), self.token.encode("ascii"))


def _handler(ui: WebUI) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        pass

    Handler.ui = ui
    return Handler


class _Handler(BaseHTTPRequestHandler):
    """Answers one request: the token first, then the read-only routes."""

    ui: WebUI
    server_version = "jetspark"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """Log nothing: a request line carries the token."""

    def _reply(self, status: int, body: bytes = b"", content_type: str | None = None) -> None:
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", _CSP)
        self.send_header("Referrer-Policy", "no-referrer")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _route(self) -> None:
        """Any request: the token first, then 405 for a method other than GET and HEAD, then the routes."""
        url = urlsplit(self.path)
        if not self.ui.authorized(self.headers, parse_qs(url.query)):
            self._reply(HTTPStatus.FORBIDDEN)
            return
        if self.command not in ("GET", "HEAD"):
            self._reply(HTTPStatus.METHOD_NOT_ALLOWED)
            return
        try:
            self._get(url.path)
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as exc:  # noqa: BLE001 - a page must not kill the server; say what failed, no data
            body = f"jetspark web UI: {type(exc).__name__} while answering {url.path}".encode()
            self._reply(HTTPStatus.INTERNAL_SERVER_ERROR, body, "text/plain; charset=utf-8")

    def _get(self, path: str) -> None:
        ui = self.ui
        if path == "/":
            self._reply(HTTPStatus.OK, html.index_page(ui.token).encode(), "text/html; charset=utf-8")
        elif path == "/metrics":
            from dag.runtime.webui.prometheus import CONTENT_TYPE, exposition

            self._reply(HTTPStatus.OK, exposition(ui.newest_looks), CONTENT_TYPE)
        elif path == "/api/jobs":
            self._json(ui.summaries())
        elif path in _STATIC:
            name, content_type = _STATIC[path]
            self._reply(HTTPStatus.OK, resources.files(__package__).joinpath(name).read_bytes(), content_type)
        else:
            self._job_route(path)

    def _job_route(self, path: str) -> None:
        parts = path.strip("/").split("/")
        job_id = parts[2] if parts[:2] == ["api", "jobs"] and len(parts) >= 3 else (
            parts[1] if parts[0] == "jobs" and len(parts) == 2 else None)
        watch = self.ui.watch(int(job_id)) if job_id is not None and job_id.isdigit() else None
        if watch is None:
            self._reply(HTTPStatus.NOT_FOUND, b"no such page or job", "text/plain; charset=utf-8")
        elif parts[0] == "jobs":
            page = html.job_page(self.ui.token, watch.job.id, watch.job.name)
            self._reply(HTTPStatus.OK, page.encode(), "text/html; charset=utf-8")
        elif len(parts) == 3:
            self._json(watch.look())
        elif parts[3:] == ["dag.svg"]:
            self._reply(HTTPStatus.OK, watch.svg().encode(), "image/svg+xml; charset=utf-8")
        else:
            self._reply(HTTPStatus.NOT_FOUND, b"no such page or job", "text/plain; charset=utf-8")

    def _json(self, data: Any) -> None:
        self._reply(HTTPStatus.OK, json.dumps(data).encode(), "application/json")

    # http.server calls do_<METHOD>: every method goes through the token check; only GET and HEAD are served
    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _route  # noqa: N815
