"""A tiny HTTP client for the web UI tests (not a test module): ``get`` answers ``(status, headers, body)``."""

from __future__ import annotations

import urllib.error
import urllib.request
from urllib.parse import urlsplit


def base_and_token(url: str) -> tuple[str, str]:
    """``http://host:port`` and the token of ``engine.web_ui_url``."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}", parts.query.removeprefix("token=")


def get(base: str, path: str, token: str | None = None, method: str = "GET",
        headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """Request ``base + path`` (with ``Authorization: Bearer token`` when given), within 30 s."""
    request = urllib.request.Request(base + path, method=method, headers=dict(headers or {}))
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()
