"""Names and data a test owns alone: driver lists and maps live for the whole session, and a fault injected
in a Spark worker fires once across processes through a marker file."""

from __future__ import annotations

import os
import uuid
from pathlib import Path


def unique(prefix: str) -> str:
    """A name no other test uses (driver lists and maps live for the whole session)."""
    return f"{prefix}-{uuid.uuid4().hex}"


def numbers(engine, n: int) -> str:
    """The name of a new driver list holding ``0 .. n - 1``."""
    name = unique("nums")
    engine.get_list(name).extend(range(n))
    return name


def once(marker: str | Path) -> bool:
    """True for the first caller that creates the file ``marker`` (atomically, in any process: Spark's Python
    workers included), False for every later one: a fault a test injects once per marker."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True
