"""What the database connectors share: naming the server in messages without its password, telling a lost
connection from a bad statement, the first connection of a processor (a failure is a configuration error),
reconnecting with a bounded, logged retry, and closing what may already be broken.

DB-API 2.0 gives every driver the same exception names (``OperationalError``, ``InterfaceError``,
``ProgrammingError``, ...) but in its own module, so a failure is classified by the names in its class
hierarchy: ``OperationalError``/``InterfaceError`` mean the connection (or the server) is gone and a retry on
a new connection may succeed; anything else (a missing table, broken SQL, a constraint) is the statement's
fault and fails at once.

A server is described from what is known: the connection's ``info`` (psycopg: host, port, database) or else
the keywords of a ``functools.partial`` connection function, or its conninfo string (``"host=db ..."`` or a
``postgresql://user:password@host:port/db`` URL); a ``password`` found there is masked in every message
(:func:`scrub`). The connectors keep the user's connection function wrapped by :func:`masked`, so that a
supplier or processor printed (a log line, a debugger, an error about the DAG) shows the server, not the
password its ``repr`` would.

>>> import functools
>>> describe_server(functools.partial(dict, host="db", port=5432, dbname="shop", password="pw"))
'db:5432/shop'
>>> scrub("password=pw failed", functools.partial(dict, password="pw"))
'password=*** failed'
>>> url = functools.partial(str, "postgresql://jet:pw@db:5433/shop")
>>> describe_server(url), scrub("postgresql://jet:pw@db:5433/shop refused", url)
('db:5433/shop', 'postgresql://jet:***@db:5433/shop refused')
>>> masked(functools.partial(dict, host="db", password="pw"))
<connection function to db:5432>
"""

from __future__ import annotations

import functools
import logging
import re
import time
from collections.abc import Callable
from typing import Any

from jetspark_base.errors import DagError

__all__ = ["DatabaseError", "RECONNECT_TIMEOUT_S", "describe_server", "scrub", "is_connection_lost", "failure",
           "error_text", "connect", "connect_with_retry", "close_quietly", "rollback_quietly", "masked"]

RECONNECT_TIMEOUT_S = 30.0
"""How long a connector keeps reconnecting (with a growing pause) before it fails the job."""


class DatabaseError(DagError, RuntimeError):
    """A database connector failed: the message names the vertex, the server and the database's own message."""


_URL = re.compile(r"^postgres(?:ql)?://(?:(?P<user>[^:@/]*)(?::(?P<password>[^@/]*))?@)?(?P<host>[^:/?]*)"
                  r"(?::(?P<port>\d+))?(?:/(?P<dbname>[^?]*))?")


def _conninfo_keywords(conninfo: str) -> dict:
    """The keywords of a libpq conninfo string: ``"host=db port=5432 ..."`` or a ``postgresql://`` URL."""
    url = _URL.match(conninfo)
    if url:
        return {k: v for k, v in url.groupdict().items() if v}
    return dict(re.findall(r"(\w+)\s*=\s*'?([^\s']*)'?", conninfo))


def _partial_keywords(new_connection_fn: Any) -> dict:
    keywords: dict = {}
    fn = new_connection_fn
    while isinstance(fn, functools.partial):
        keywords = {**fn.keywords, **keywords}
        if fn.args and isinstance(fn.args[0], str):
            keywords = {**_conninfo_keywords(fn.args[0]), **keywords}
        fn = fn.func
    return keywords


def describe_server(new_connection_fn: Any, connection: Any = None) -> str:
    """``host:port/database`` as well as known (never the password); ``'the database'`` if nothing is."""
    info = getattr(connection, "info", None)
    if info is not None and getattr(info, "host", None):
        return f"{info.host}:{info.port}/{info.dbname}"
    kw = _partial_keywords(new_connection_fn)
    host = kw.get("host") or kw.get("hostaddr")
    if host:
        return f"{host}:{kw.get('port', 5432)}/{kw.get('dbname') or kw.get('database') or ''}".rstrip("/")
    return "the database"


def scrub(message: str, new_connection_fn: Any) -> str:
    """``message`` with the connection function's password (if it has one in sight) replaced by ``***``."""
    password = _partial_keywords(new_connection_fn).get("password")
    return message.replace(str(password), "***") if password else message


class _Masked(functools.partial):
    """A connection function as it was, printed as the server it connects to (see :func:`masked`)."""

    def __repr__(self) -> str:
        return f"<connection function to {describe_server(self)}>"


def masked(new_connection_fn: Callable[[], Any]) -> Callable[[], Any]:
    """``new_connection_fn`` unchanged in what it does (and picklable as it was), but its ``repr`` names only
    the server: ``functools.partial(psycopg.connect, password=...)`` would print the password."""
    return new_connection_fn if isinstance(new_connection_fn, _Masked) else _Masked(new_connection_fn)


def is_connection_lost(exc: BaseException) -> bool:
    """True for DB-API ``OperationalError``/``InterfaceError`` (any driver): a new connection may succeed."""
    return any(cls.__name__ in ("OperationalError", "InterfaceError") for cls in type(exc).__mro__)


def error_text(exc: BaseException, new_connection_fn: Any) -> str:
    """The database's message of ``exc`` on one line (its type if it has none), the password scrubbed."""
    return scrub(" ".join(str(exc).split()) or type(exc).__name__, new_connection_fn)


def failure(what: str, new_connection_fn: Any, exc: BaseException, connection: Any = None) -> DatabaseError:
    """A :class:`DatabaseError` saying ``what`` failed on which server and the database's message."""
    server, text = describe_server(new_connection_fn, connection), error_text(exc, new_connection_fn)
    return DatabaseError(scrub(f"{what} on {server} failed: {type(exc).__name__}: {text}", new_connection_fn))


def connect(new_connection_fn: Callable[[], Any], what: str) -> Any:
    """A processor's first connection; a failure (wrong password, no server) fails at once with a
    :class:`DatabaseError` saying ``what`` was connecting to which server: it is a configuration error, not
    worth retrying."""
    try:
        return new_connection_fn()
    except Exception as exc:  # noqa: BLE001 - reported with the server's message
        raise failure(f"{what}: connecting", new_connection_fn, exc) from None


def connect_with_retry(new_connection_fn: Callable[[], Any], what: str, log: logging.Logger,
                       timeout: float = RECONNECT_TIMEOUT_S) -> Any:
    """A new connection, retried (each retry logged at WARNING) while the server is unreachable, for at most
    ``timeout`` s; then a :class:`DatabaseError`. Used after a connection that once worked was lost."""
    deadline = time.monotonic() + timeout
    pause, attempt = 0.1, 1
    while True:
        try:
            return new_connection_fn()
        except Exception as exc:  # noqa: BLE001 - classified below
            if not is_connection_lost(exc) or time.monotonic() + pause > deadline:
                raise failure(f"{what}: reconnecting (attempt {attempt})", new_connection_fn, exc) from None
            log.warning("%s: reconnect attempt %d to %s failed (%s); retrying in %.1f s", what, attempt,
                        describe_server(new_connection_fn), error_text(exc, new_connection_fn),
                        pause)
        time.sleep(pause)
        pause, attempt = min(pause * 2, 2.0), attempt + 1


def close_quietly(connection: Any) -> None:
    """Close a connection (or cursor) that may already be broken; never raises."""
    if connection is None:
        return
    try:
        connection.close()
    except Exception:  # noqa: BLE001 - it is being thrown away
        pass


def rollback_quietly(connection: Any) -> None:
    """Roll back the open transaction of a connection that may already be broken (it is closed next); never
    raises."""
    if connection is None:
        return
    try:
        connection.rollback()
    except Exception:  # noqa: BLE001 - the server rolls back when the connection closes anyway
        pass
