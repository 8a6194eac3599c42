"""Headless Chromium driven over the DevTools protocol (a websocket), for the web UI tests (not a test module).

``Browser(tmp_dir)`` starts Debian's ``/usr/bin/chromium`` in its own process group with a fresh profile and
``--remote-debugging-port=0``, reads the port Chromium chose from ``DevToolsActivePort`` and connects to its
page; ``close()`` kills the whole process group (bounded), so no Chromium process outlives the test. Every wait
is bounded.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars", "--window-size=1200,1500"]
START_TIMEOUT = 60.0
CALL_TIMEOUT = 30.0


class Browser:
    """One headless Chromium with one page (see the module docstring)."""

    def __init__(self, tmp_dir: Path):
        import websocket

        profile = tmp_dir / "chromium-profile"
        profile.mkdir(parents=True, exist_ok=True)
        self._log = open(tmp_dir / "chromium.log", "wb")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0",
                                      "about:blank"], stdout=self._log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        self._ids = itertools.count(1)
        try:
            port = self._devtools_port(profile / "DevToolsActivePort")
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=CALL_TIMEOUT) as answer:
                pages = [t for t in json.load(answer) if t.get("type") == "page"]
            self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=CALL_TIMEOUT,
                                                  suppress_origin=True)
            self.call("Page.enable")
        except BaseException:
            self.close()
            raise

    def _devtools_port(self, active_port: Path) -> int:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {self.proc.returncode}; see {self._log.name}")
            lines = active_port.read_text().split("\n") if active_port.is_file() else []
            if lines and lines[0].strip().isdigit():
                return int(lines[0])
            time.sleep(0.1)
        raise TimeoutError(f"chromium did not open its DevTools port within {START_TIMEOUT} s")

    def call(self, method: str, **params: Any) -> dict:
        """Send one DevTools command and return its result (events in between are skipped)."""
        call_id = next(self._ids)
        self.ws.send(json.dumps({"id": call_id, "method": method, "params": params}))
        deadline = time.monotonic() + CALL_TIMEOUT
        while time.monotonic() < deadline:
            message = json.loads(self.ws.recv())
            if message.get("id") == call_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
        raise TimeoutError(f"{method}: no answer within {CALL_TIMEOUT} s")

    def open(self, url: str) -> None:
        """Navigate to ``url`` and wait (bounded) until the new document has loaded."""
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + CALL_TIMEOUT
        while self.evaluate("location.href + ' ' + document.readyState") != f"{url} complete":
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not load within {CALL_TIMEOUT} s")
            time.sleep(0.05)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-able values only)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path) -> None:
        """A PNG of the whole page."""
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        """Close the connection and kill Chromium's process group; waits (bounded) until it is gone."""
        ws = getattr(self, "ws", None)
        if ws is not None:
            try:
                ws.close()
            except OSError:
                pass
        for sig in (signal.SIGTERM, signal.SIGKILL):  # the renderers and helpers are in the group too
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                continue
        self._log.close()

    def group_alive(self) -> bool:
        """Whether any process of Chromium's process group still runs."""
        try:
            os.killpg(self.proc.pid, 0)
            return True
        except ProcessLookupError:
            return False
