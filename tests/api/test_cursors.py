"""Page cursors on SQLite and PostgreSQL: a cursor the server did not issue is 422
`invalid_cursor` (or `cursor_mismatch` for another listing's), never a 5xx."""

from __future__ import annotations

import base64
import json

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.cursors import encode_cursor, encode_text
from tests.support.factories import assert_error, user

REJECTED = ("invalid_cursor", "cursor_mismatch")
# The lists that take a cursor, with the kind of cursor each issues.
PAGED = {"/sessions": "s1", "/sessions/s/summaries": "v1"}


async def _session_with_history(client: httpx.AsyncClient) -> None:
    assert (await client.post("/sessions", json={"id": "s"})).status_code == 201
    body = {"messages": [user("hello"), user("again")]}
    assert (await client.post("/sessions/s/messages", json=body)).status_code == 201
    assert (await client.post("/sessions/s/clear")).status_code == 200


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize(
    "text",
    [
        "s1:99999999999999999999",  # 500 on both databases
        "s1:2147483648",  # 500 on PostgreSQL (integer out of range)
        "s1:-1",
        "s1: 5",  # int() tolerates spaces, signs, underscores and leading zeros
        "s1:+5",
        "s1:0_5",
        "s1:05",
        "s2:" + _nested(2000),  # RecursionError
        'v1:{"k":1}',
    ],
)
async def test_reported_cursors_are_422(client: httpx.AsyncClient, text: str) -> None:
    response = await client.get("/sessions", params={"cursor": encode_text(text)})
    assert_error(response, 422, "invalid_cursor")


@pytest.mark.parametrize("position", ["2147483648", "99999999999999999999", "07", " 1"])
async def test_summary_cursors_not_issued_are_422(client: httpx.AsyncClient, position: str) -> None:
    await _session_with_history(client)
    response = await client.get(
        "/sessions/s/summaries", params={"cursor": encode_text(f"v1:{position}")}
    )
    assert_error(response, 422, "invalid_cursor")


async def test_issued_cursors_still_page(client: httpx.AsyncClient) -> None:
    for sid in ("a", "b", "c"):
        assert (await client.post("/sessions", json={"id": sid})).status_code == 201
    first = (await client.get("/sessions", params={"limit": 1, "sort": "id"})).json()
    cursor = first["next_cursor"]
    response = await client.get("/sessions", params={"limit": 1, "sort": "id", "cursor": cursor})
    assert response.status_code == 200, response.text
    assert [s["id"] for s in response.json()["sessions"]] == ["b"]
    # The same listing spelled with its JSON keys reordered was never issued.
    listing = json.loads(base64.urlsafe_b64decode(cursor + "==").decode()[3:])
    reordered = encode_text("s2:" + json.dumps(dict(reversed(listing.items()))))
    response = await client.get("/sessions", params={"limit": 1, "sort": "id", "cursor": reordered})
    assert_error(response, 422, "invalid_cursor")


async def test_a_huge_cursor_is_422_and_not_echoed_whole(client: httpx.AsyncClient) -> None:
    response = await client.get("/sessions", params={"cursor": "A" * 10_000})
    error = assert_error(response, 422, "invalid_cursor")
    assert len(error["details"]["cursor"]) <= 200


_TEXT = st.text(st.characters(codec="utf-8"), max_size=40)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=5),
    max_leaves=8,
)
_LISTING = st.fixed_dictionaries(
    {
        "s": st.sampled_from(["pk", "id", "created_at", "message_count"]) | _TEXT,
        "o": st.sampled_from(["asc", "desc"]) | _TEXT,
        "q": st.just("") | _JSON,
        "v": _JSON,
        "k": st.integers() | _JSON,
    }
)
_PREFIX = st.sampled_from(["s1:", "s2:", "v1:", ""])
CURSORS = st.one_of(
    _TEXT,  # not base64 at all
    st.binary(max_size=64).map(_b64),  # base64 of arbitrary bytes
    st.tuples(_PREFIX, st.integers()).map(lambda p: encode_text(f"{p[0]}{p[1]}")),
    st.tuples(_PREFIX, _TEXT).map(lambda p: encode_text(p[0] + p[1])),
    st.tuples(_PREFIX, _JSON).map(lambda p: encode_text(p[0] + json.dumps(p[1]))),
    _LISTING.map(lambda listing: encode_text("s2:" + json.dumps(listing))),
    st.integers(1, 3000).map(lambda depth: encode_text("s2:" + _nested(depth))),
    st.integers(1, 3000).map(lambda depth: encode_text('s2:{"s":' * depth + "1" + "}" * depth)),
)


def _issued(kind: str, cursor: str) -> bool:
    """Whether `cursor` is one the server issues for a position of `kind` (plain pages); an
    empty cursor is no cursor (the first page)."""
    if not cursor:
        return True
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        return encode_cursor(kind, int(text.removeprefix(f"{kind}:"))) == cursor
    except ValueError:
        return False


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(cursor=CURSORS)
async def test_any_cursor_not_issued_is_422(client: httpx.AsyncClient, cursor: str) -> None:
    if (await client.get("/sessions/s")).status_code == 404:
        await _session_with_history(client)
    for path, kind in PAGED.items():
        response = await client.get(path, params={"cursor": cursor})
        if response.status_code == 200:
            assert _issued(kind, cursor), (path, cursor)
            continue
        assert response.status_code == 422, (path, cursor, response.text)
        assert response.json()["error"]["code"] in REJECTED, response.text


def test_strategies_reach_real_positions() -> None:
    """The property above is not vacuous: an issued position decodes as issued."""
    assert _issued("s1", encode_cursor("s1", 3))
    assert not _issued("s1", encode_text("s1:03"))
