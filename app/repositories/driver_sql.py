"""SQLAlchemy statements compiled once per dialect, for reads that run as plain driver SQL.

The hot reads (app/repositories/context.py) are declared once, as SQLAlchemy statements.
Some run on connections of a driver's own (sqlite3, asyncpg: app/repositories/context_version.py,
context_rows.py), the rest through `exec_driver_sql`: both take the compiled SQL and its
parameters in position order, and both hand back the driver's raw values, so one decoder
serves every path.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Dialect
from sqlalchemy.dialects import sqlite
from sqlalchemy.dialects.postgresql import asyncpg
from sqlalchemy.sql import Executable
from sqlalchemy.sql.compiler import Compiled

# The drivers the app runs on: sqlite3 (aiosqlite wraps it) takes `?`, asyncpg `$n`.
DIALECTS: dict[str, Dialect] = {
    "sqlite": sqlite.dialect(paramstyle="qmark"),
    "postgresql": asyncpg.dialect(),  # type: ignore[no-untyped-call]
}


class DriverSQL:
    """One statement's SQL text and parameter order per dialect, compiled on first use."""

    def __init__(self, statement: Executable) -> None:
        self.statement = statement
        self._compiled: dict[str, tuple[str, tuple[str, ...], dict[str, Any]]] = {}

    def _compile(self, dialect: str) -> tuple[str, tuple[str, ...], dict[str, Any]]:
        compiled: Compiled = self.statement.compile(dialect=DIALECTS[dialect])  # type: ignore[attr-defined]
        names = tuple(compiled.positiontup or ())  # type: ignore[attr-defined]
        # Literals of the statement (`role = 'user'`, OFFSET 0) are parameters with values.
        defaults = {k: v for k, v in compiled.params.items() if v is not None}
        found = self._compiled[dialect] = (compiled.string, names, defaults)
        return found

    def sql(self, dialect: str) -> str:
        return (self._compiled.get(dialect) or self._compile(dialect))[0]

    def args(self, dialect: str, params: dict[str, Any]) -> tuple[Any, ...]:
        """`params` (by bind name) in the order the SQL of `dialect` takes them."""
        _, names, defaults = self._compiled.get(dialect) or self._compile(dialect)
        return tuple(params[name] if name in params else defaults[name] for name in names)


__all__ = ["DIALECTS", "DriverSQL"]
