"""Export and import of one session as JSONL (the records: app/schemas/transfer.py).

Neither side holds a session whole: the export reads keyset pages of PAGE_ROWS rows in one
snapshot and yields line by line; the import validates each line as it arrives and inserts
in batches of PAGE_ROWS, in one transaction (a refused line leaves nothing behind).

Lines keep each JSON object's keys in their stored order (the context renders them in that
order: byte-for-byte after an import). The checksum is sha256 over each record's canonical
JSON (sorted keys; an integral float written as an integer, since PostgreSQL's JSONB keeps
`1e2` as `100`), so the same session has the same checksum on SQLite and PostgreSQL, whatever
key order JSONB stores.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack
from datetime import datetime
from typing import Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.core.db import read_scope
from app.core.errors import (
    FoldwiseError,
    InvalidExport,
    InvalidMessage,
    SessionExists,
    SessionNotFound,
    UnknownModel,
)
from app.core.settings import Settings
from app.engine.prompt_cache import CHAIN_HEAD, chain_elements
from app.engine.shapes import normalize_message, validate_tools
from app.repositories.transfer import Row, TransferRepository
from app.schemas.input_types import MAX_ITEMS, MessageJson
from app.schemas.sessions import SessionSettings
from app.schemas.transfer import (
    EXPORT_FORMAT,
    CalibrationRecord,
    EndRecord,
    MessageRecord,
    SessionImport,
    SessionRecord,
    SummaryRecord,
)
from app.tokens.registry import ModelRegistry

# Session fields a context read writes (the record of the context served last, for
# `usage.cache` and calibration): exported, but outside the checksum, so reading a session
# does not make it another one (a re-import stays `unchanged`).
WRITTEN_BY_READS = frozenset({"last_context"})
# Rows per page read or batch written: ~1 MB of typical messages, a few ms per round trip.
PAGE_ROWS = 1000

Record = SessionRecord | MessageRecord | SummaryRecord | CalibrationRecord | EndRecord
_RECORD = TypeAdapter[Record](Annotated[Record, Field(discriminator="kind")])
_POSTED = TypeAdapter[dict[str, Any]](MessageJson)


def _wire(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in row.items()}


def _settled(value: Any) -> Any:
    """`value` with integral floats as integers (what JSONB gives back for them); `value`
    itself when it holds none."""
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, dict):
        items = {key: _settled(item) for key, item in value.items()}
        same = all(items[key] is item for key, item in value.items())
        return value if same else items
    if isinstance(value, list):
        listed = [_settled(item) for item in value]
        return value if all(a is b for a, b in zip(listed, value, strict=True)) else listed
    return value


def _dumps(record: Any, *, canonical: bool = False) -> str:
    return json.dumps(record, sort_keys=canonical, ensure_ascii=False, separators=(",", ":"))


class Checksum:
    """The running checksum and counts of a session's records."""

    def __init__(self) -> None:
        self._sha = hashlib.sha256()
        self.messages = 0
        self.summaries = 0

    def add(self, record: dict[str, Any]) -> None:
        kind = record["kind"]
        if kind == "session":  # what was served last is no part of the conversation
            record = {key: value for key, value in record.items() if key not in WRITTEN_BY_READS}
        elif kind == "summary" and record.get("usage") is None:
            # A field added later counts only when set: earlier exports keep their checksum.
            record = {key: value for key, value in record.items() if key != "usage"}
        text = _dumps(record, canonical=True)
        # Only a float of 1e16 or more is written with "e+", and only such a float can be
        # integral in a way JSONB changes: the walk runs for the rare record that may hold one.
        if "e+" in text:
            text = _dumps(_settled(record), canonical=True)
        self._sha.update(text.encode())
        self._sha.update(b"\n")
        self.messages += kind == "message"
        self.summaries += kind == "summary"

    def end(self) -> dict[str, Any]:
        return EndRecord(
            messages=self.messages, summaries=self.summaries, checksum=self._sha.hexdigest()
        ).model_dump()


async def session_records(
    repo: TransferRepository, session_pk: int, session_id: str, row: Row
) -> AsyncIterator[dict[str, Any]]:
    """The session's records, read in keyset pages: session, messages, summaries."""
    yield session_record(session_id, row)
    after = 0
    while page := await repo.messages_after(session_pk, after, PAGE_ROWS):
        for message in page:
            yield row_record("message", message)
        after = page[-1]["seq"]
    after = 0
    while page := await repo.summaries_after(session_pk, after, PAGE_ROWS):
        for summary in page:
            yield row_record("summary", summary)
        after = page[-1]["version"]


def session_record(session_id: str, row: Row) -> dict[str, Any]:
    return {"kind": "session", "format": EXPORT_FORMAT, "id": session_id, **_wire(row)}


def row_record(kind: str, row: Row) -> dict[str, Any]:
    """The record of a stored message or summary row."""
    return {"kind": kind, **_wire(row)}


async def stored_checksum(
    repo: TransferRepository, session_pk: int, session_id: str, row: Row
) -> dict[str, Any]:
    """The `end` record of the stored session (counts and checksum)."""
    checksum = Checksum()
    async for record in session_records(repo, session_pk, session_id, row):
        checksum.add(record)
    return checksum.end()


async def open_export(
    factory: async_sessionmaker[AsyncSession],
    tenant: str,
    session_id: str,
    registry: ModelRegistry,
) -> AsyncIterator[str]:
    """The export's lines, read in one snapshot; SessionNotFound before the first line."""
    stack = AsyncExitStack()
    db = await stack.enter_async_context(read_scope(factory, repeatable=True))
    try:
        repo = TransferRepository(db)
        found = await repo.session_row(tenant, session_id)
        if found is None:
            raise SessionNotFound(session_id)
    except BaseException:
        await stack.aclose()
        raise
    family = _family(registry, found[1]["model"])
    return _export_lines(stack, repo, (tenant, family), session_id, *found)


def _family(registry: ModelRegistry, model: str) -> str | None:
    try:
        return registry.get(model).family
    except UnknownModel:  # the registry changed since: no calibration to carry
        return None


async def _export_lines(
    stack: AsyncExitStack,
    repo: TransferRepository,
    tenant_family: tuple[str, str | None],
    session_id: str,
    session_pk: int,
    row: Row,
) -> AsyncIterator[str]:
    async with stack:
        checksum = Checksum()
        async for record in session_records(repo, session_pk, session_id, row):
            checksum.add(record)
            yield _dumps(record) + "\n"
        tenant, family = tenant_family
        calibration = await repo.calibration(tenant, family) if family else None
        if calibration:
            yield _dumps(row_record("calibration", calibration)) + "\n"
        yield _dumps(checksum.end()) + "\n"


async def split_lines(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """Lines of a byte stream, each copied once (a long line arriving in many chunks is
    joined once, not re-concatenated per chunk)."""
    pending: list[bytes] = []
    async for chunk in chunks:
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            pending.append(chunk[start:end])
            yield b"".join(pending)
            pending, start = [], end + 1
        if start < len(chunk):
            pending.append(chunk[start:])
    if pending:
        yield b"".join(pending)


class SessionImporter:
    """POST /sessions/import and `foldwise import`: one export into this tenant."""

    def __init__(
        self, db: AsyncSession, tenant: str, settings: Settings, registry: ModelRegistry
    ) -> None:
        self.repo = TransferRepository(db)
        self.tenant = tenant
        self.registry = registry

    async def run(self, lines: AsyncIterator[bytes]) -> SessionImport:
        records = _checked_records(lines)
        line, first = await anext(records, (0, None))
        if not isinstance(first, SessionRecord):
            raise InvalidExport("an export starts with its session record", {"line": line + 1})
        self.registry.get(first.model)  # UnknownModel (422), as on POST /sessions
        stored = await self.repo.session_row(self.tenant, first.id)
        if stored is not None:
            return await self._compare(first, records, *stored)
        session_pk = await self.repo.insert_session(self.tenant, first.id, _session_row(first))
        messages: list[dict[str, Any]] = []
        summaries: list[dict[str, Any]] = []
        end = None
        async for index, record in records:
            if isinstance(record, MessageRecord):
                messages.append(_message_row(record, index))
            elif isinstance(record, SummaryRecord):
                await self.repo.insert_messages(session_pk, messages)  # the last batch
                messages = []
                summaries.append(record.model_dump(exclude={"kind"}))
            elif isinstance(record, CalibrationRecord):
                await self.repo.add_calibration(self.tenant, record.model_dump(exclude={"kind"}))
            else:
                end = record
            if len(messages) == PAGE_ROWS:
                await self.repo.insert_messages(session_pk, messages)
                messages = []
            if len(summaries) == PAGE_ROWS:
                await self.repo.insert_summaries(session_pk, summaries)
                summaries = []
        await self.repo.insert_messages(session_pk, messages)
        await self.repo.insert_summaries(session_pk, summaries)
        assert isinstance(end, EndRecord)  # _checked_records ends with one
        return SessionImport(id=first.id, status="created", **end.model_dump(exclude={"kind"}))

    async def _compare(
        self,
        first: SessionRecord,
        records: AsyncIterator[tuple[int, Record]],
        session_pk: int,
        row: Row,
    ) -> SessionImport:
        """Idempotence: the same export again is `unchanged`; another session of that id
        is 409 `session_exists` (delete it first to replace it)."""
        end = None
        async for _, record in records:
            end = record
        assert isinstance(end, EndRecord)
        mine = await stored_checksum(self.repo, session_pk, first.id, row)
        if mine["checksum"] != end.checksum:
            raise SessionExists(first.id)
        return SessionImport(id=first.id, status="unchanged", **end.model_dump(exclude={"kind"}))


def _session_row(record: SessionRecord) -> dict[str, Any]:
    try:
        SessionSettings.model_validate(record.settings)
    except ValidationError as exc:
        raise InvalidExport(f"settings: {_reason(exc)}", {"line": 1}) from None
    row = record.model_dump(exclude={"kind", "format", "id"})
    if record.tools is not None:
        row["tools"] = validate_tools(record.tools)
    return row


def _message_row(record: MessageRecord, index: int) -> dict[str, Any]:
    """The stored row, through the checks an append makes (input types, then the shape)."""
    try:
        shaped = normalize_message(_POSTED.validate_python(record.posted()))
    except (ValidationError, InvalidMessage) as exc:
        raise InvalidExport(_reason(exc), {"line": index + 1}) from None
    return {
        **record.model_dump(exclude={"kind"}),
        "content": shaped.content,
        "tool_calls": shaped.tool_calls,
        "metadata": shaped.metadata,
    }


async def _checked_records(lines: AsyncIterator[bytes]) -> AsyncIterator[tuple[int, Record]]:
    """(line index, record) in export order, checked as a whole (`_Reading`). InvalidExport
    names the line of the first problem."""
    reading = _Reading()
    index = -1
    async for raw in lines:
        index += 1
        if not raw.strip():
            continue
        data, record = _parsed(raw, index)
        reading.take(record, data, index)
        yield index, record
        if isinstance(record, EndRecord):
            async for rest in lines:
                if rest.strip():
                    raise InvalidExport("nothing may follow the end record", {"line": index + 2})
            return
    raise InvalidExport("the export is cut short: no end record", {"line": index + 2})


def _parsed(raw: bytes, index: int) -> tuple[Any, Record]:
    """The line's JSON and its record."""
    try:
        text = raw.decode()
    except UnicodeDecodeError:  # as for every JSON body: 400, not 422
        raise FoldwiseError("the body is not UTF-8", {"line": index + 1}) from None
    try:
        data = json.loads(text)
        return data, _RECORD.validate_python(data)
    except (ValidationError, ValueError, RecursionError) as exc:
        raise InvalidExport(_reason(exc), {"line": index + 1}) from None


# A removed message may still be in the chain recorded before its removal: as many elements
# as any message can render (MAX_ITEMS blocks and MAX_ITEMS tool calls).
REMOVED_CHAIN_ELEMENTS = 1 + 2 * MAX_ITEMS


class _Reading:
    """What the records so far say: seqs rising within the session's counter, versions
    1…summary_version, one `end` with the counts and checksum, and the served contexts'
    prefix chains no longer than the session's messages can make (`chain_elements`: the
    bound scales with the session, so a long one imports and a forged chain does not)."""

    def __init__(self) -> None:
        self.checksum = Checksum()
        self.session: SessionRecord | None = None
        self.session_line = self.seq = self.version = 0
        self.calibrated = False
        self.chain_room = CHAIN_HEAD

    def take(self, record: Record, data: Any, index: int) -> None:
        problem = _out_of_order(record, self.session, self.seq, self.version)
        if self.calibrated and not isinstance(record, EndRecord):
            problem = "only the end record follows the calibration"
        if problem:
            raise InvalidExport(problem, {"line": index + 1})
        if isinstance(record, EndRecord):
            _check_end(record, self.checksum, self.session, index)
            self._check_chains()
        elif isinstance(record, CalibrationRecord):
            self.calibrated = True
        else:
            self.checksum.add(data)
            self._advance(record, index)

    def _advance(self, record: SessionRecord | MessageRecord | SummaryRecord, index: int) -> None:
        if isinstance(record, SessionRecord):
            self.session, self.session_line = record, index + 1
            self.chain_room += record.removed_count * REMOVED_CHAIN_ELEMENTS
        elif isinstance(record, MessageRecord):
            self.seq = record.seq
            self.chain_room += chain_elements(record.content, record.tool_calls)
        else:
            self.version = record.version

    def _check_chains(self) -> None:
        assert self.session is not None
        for model, served in self.session.last_context.items():
            chain = served.get("chain") if isinstance(served, dict) else None
            if isinstance(chain, list) and len(chain) > self.chain_room:
                raise InvalidExport(
                    f"last_context.{model}.chain has {len(chain)} entries: the session's "
                    f"messages render to at most {self.chain_room}",
                    {"line": self.session_line},
                )


def _out_of_order(record: Record, session: SessionRecord | None, seq: int, version: int) -> str:
    if isinstance(record, SessionRecord):
        return "a second session record" if session else ""
    if session is None:
        return "an export starts with its session record"
    if isinstance(record, MessageRecord):
        if version:
            return "messages come before summaries"
        if not seq < record.seq <= session.last_seq:
            return f"seq {record.seq} is not after {seq} and within last_seq {session.last_seq}"
    elif isinstance(record, SummaryRecord) and record.version != version + 1:
        return f"summary version {record.version} does not follow {version}"
    return ""


def _check_end(
    end: EndRecord, checksum: Checksum, session: SessionRecord | None, index: int
) -> None:
    assert session is not None
    found = checksum.end()
    expected_messages = session.last_seq - session.removed_count
    problem = ""
    if (end.messages, end.summaries) != (found["messages"], found["summaries"]):
        problem = f"the end record counts {end.messages} messages, {end.summaries} summaries"
    elif found["messages"] != expected_messages:
        problem = f"{found['messages']} messages where the session holds {expected_messages}"
    elif found["summaries"] != session.summary_version:
        problem = f"{found['summaries']} summaries for version {session.summary_version}"
    elif end.checksum != found["checksum"]:
        problem = "the checksum does not match the records"
    if problem:
        raise InvalidExport(problem, {"line": index + 1})


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        return f"{where}: {first['msg']}" if where else str(first["msg"])
    if isinstance(exc, InvalidMessage):
        return exc.message
    return str(exc)
