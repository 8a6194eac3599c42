"""The PostgreSQL CDC source's settings: :class:`PostgresCdcConfig`, filled by the builder's setters
(:class:`connectors.cdc.PostgresCdcBuilder`) and read by the source processor (:mod:`connectors.cdc_source`).

It knows the server (never printing the password: a ``SecretStr``), which tables are captured (the schema and
table whitelists, full-match regexps), the replication slot and publication, and how to open a psycopg
connection (imported only when a connection is made; a missing psycopg names the extra to install).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from processors.io.dbapi import masked

__all__ = ["PostgresCdcConfig"]


class PostgresCdcConfig(BaseModel):
    """Where and what the PostgreSQL CDC source reads (the builder's setters fill it)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="The source's name: its vertex name and the default slot name's base.")
    host: str = Field("localhost", description="The server's host name or address.")
    port: int = Field(5432, ge=1, le=65535, description="The server's port.")
    user: str | None = Field(None, description="The database user (needs REPLICATION or superuser).")
    password: SecretStr | None = Field(None, description="The user's password (never printed).")
    database: str | None = Field(None, description="The database to capture.")
    schema_whitelist: tuple[str, ...] = Field((), description="Regexps a table's schema must fully match (any).")
    table_whitelist: tuple[str, ...] = Field((), description="Regexps 'schema.table' must fully match (any).")
    slot_name: str | None = Field(None, description="The replication slot; default derived from name.")
    drop_slot_on_stop: bool = Field(False, description="Drop the slot when the job ends.")
    publication_name: str = Field("jetspark_publication",
                                  description="The pgoutput publication (created FOR ALL TABLES if missing).")
    commit_period_ms: int = Field(10_000, ge=0, description="Without a processing guarantee: how often the slot "
                                                            "is advanced to what was emitted.")

    def slot(self) -> str:
        """The replication slot's name (PostgreSQL allows ``[a-z0-9_]``, at most 63 characters)."""
        return self.slot_name or ("jetspark_" + re.sub(r"[^a-z0-9_]", "_", self.name.lower()))[:63]

    def connect_kwargs(self, **extra: Any) -> dict:
        """psycopg keywords (the password in clear, for the driver only)."""
        kw = {"host": self.host, "port": self.port, "dbname": self.database, "user": self.user,
              "password": self.password.get_secret_value() if self.password else None,
              "connect_timeout": 10, "application_name": "jetspark-cdc", **extra}
        return {k: v for k, v in kw.items() if v is not None}

    def connection_fn(self, **extra: Any) -> Callable[[], Any]:
        """A new psycopg connection to the server (``extra``: e.g. ``autocommit=True``, ``replication=...``)."""
        return masked(functools.partial(_psycopg_connect, **self.connect_kwargs(**extra)))

    def server(self) -> str:
        """``host:port/database`` for messages (never the user or the password)."""
        return f"{self.host}:{self.port}/{self.database or ''}"

    def matches(self, schema: str, table: str) -> bool:
        """Whether ``schema.table`` is captured (empty whitelists match every table)."""
        if self.schema_whitelist and not any(re.fullmatch(p, schema) for p in self.schema_whitelist):
            return False
        return not self.table_whitelist or any(re.fullmatch(p, f"{schema}.{table}") for p in self.table_whitelist)


def _psycopg_connect(**kwargs: Any) -> Any:
    try:
        import psycopg
    except ImportError as exc:  # pragma: no cover - the extra is installed in dev
        raise ImportError("PostgreSQL CDC needs psycopg: pip install 'jetspark[postgres]'") from exc
    return psycopg.connect(**kwargs)
