"""Hostile input on input, on SQLite and PostgreSQL: a clear 4xx, never a 5xx, and no
accepted write can make a later read of its session fail."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.factories import assert_error, tool_result, tool_use, user


def _use(call_id: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "f", "input": {}}


HOSTILE_STRINGS = ["\ud800", "a\udfffb", "\x00", "nul\x00in", "\ud83d"]
NON_FINITE = ["NaN", "Infinity", "-Infinity", "1e309"]


def _raw(document: str) -> dict[str, Any]:
    return {"content": document.encode(), "headers": {"content-type": "application/json"}}


async def _post(client: httpx.AsyncClient, url: str, body: Any) -> httpx.Response:
    """POST `body` as ASCII JSON (escaped surrogates and NaN as a client may send them)."""
    return await client.post(url, **_raw(json.dumps(body, allow_nan=True)))


async def _session(client: httpx.AsyncClient, sid: str = "s") -> None:
    assert (await _post(client, "/sessions", {"id": sid})).status_code == 201


async def _reads_ok(client: httpx.AsyncClient, sid: str = "s") -> None:
    for path in (f"/sessions/{sid}", f"/sessions/{sid}/messages", f"/sessions/{sid}/summaries"):
        assert (await client.get(path)).status_code == 200, path
    for fmt in ("anthropic", "openai", "raw"):
        response = await client.get(f"/sessions/{sid}/context?format={fmt}&explain=true")
        assert response.status_code == 200, response.text


def _assert_field_error(response: httpx.Response, field: str) -> None:
    assert response.status_code == 422, response.text
    body = response.json()["error"]
    assert body["code"] == "validation_error"
    assert field in body["message"], body["message"]


class TestTextsAtTheDoor:
    @pytest.mark.parametrize("bad", HOSTILE_STRINGS)
    async def test_message_content_is_refused_naming_the_place(
        self, client: httpx.AsyncClient, bad: str
    ) -> None:
        await _session(client)
        message = {"role": "user", "content": [{"type": "text", "text": f"x{bad}"}]}
        response = await _post(client, "/sessions/s/messages", {"messages": [message]})
        _assert_field_error(response, "content.0.text")
        await _reads_ok(client)

    @pytest.mark.parametrize("bad", HOSTILE_STRINGS)
    @pytest.mark.parametrize(
        "body",
        [
            {"id": "s2", "system_prompt": "{bad}"},
            {"id": "s2", "metadata": {"k": "{bad}"}},
            {"id": "s2", "metadata": {"{bad}": 1}},
            {"id": "s2", "model": "{bad}"},
            {"id": "s2", "tools": [{"name": "{bad}", "input_schema": {}}]},
            {"id": "{bad}"},
        ],
    )
    async def test_session_fields_are_refused(
        self, client: httpx.AsyncClient, bad: str, body: dict[str, Any]
    ) -> None:
        document = json.dumps(body).replace("{bad}", json.dumps(bad)[1:-1])
        response = await client.post("/sessions", **_raw(document))
        assert_error(response, 422, "validation_error")
        assert (await client.get("/sessions")).status_code == 200

    @pytest.mark.parametrize("bad", HOSTILE_STRINGS)
    @pytest.mark.parametrize("key", ["client_id", "name", "tool_call_id"])
    async def test_message_ids_are_refused(
        self, client: httpx.AsyncClient, bad: str, key: str
    ) -> None:
        await _session(client)
        message = {"role": "tool" if key == "tool_call_id" else "user", "content": "x", key: bad}
        response = await _post(client, "/sessions/s/messages", {"messages": [message]})
        assert_error(response, 422, "validation_error")
        await _reads_ok(client)

    @pytest.mark.parametrize("number", NON_FINITE)
    @pytest.mark.parametrize("place", ["metadata", "input"])
    async def test_non_finite_numbers_are_refused(
        self, client: httpx.AsyncClient, number: str, place: str
    ) -> None:
        await _session(client)
        if place == "metadata":
            message = f'{{"role": "user", "content": "x", "metadata": {{"n": {number}}}}}'
        else:
            message = (
                '{"role": "assistant", "content": [{"type": "tool_use", "id": "t1", '
                f'"name": "f", "input": {{"n": {number}}}}}]}}'
            )
        response = await client.post("/sessions/s/messages", **_raw(f'{{"messages": [{message}]}}'))
        assert_error(response, 422, "validation_error")
        assert "finite" in response.json()["error"]["message"]
        await _reads_ok(client)

    async def test_huge_integers_and_deep_nesting_are_refused(
        self, client: httpx.AsyncClient
    ) -> None:
        await _session(client)
        for metadata in ({"n": 2**64}, {"n": -(2**70)}, json.loads("[" * 80 + "]" * 80)):
            message = {"role": "user", "content": "x", "metadata": {"v": metadata}}
            response = await _post(client, "/sessions/s/messages", {"messages": [message]})
            assert_error(response, 422, "validation_error")
        deep = '{"messages": ' + "[" * 100_000 + "]" * 100_000 + "}"
        assert_error(await client.post("/sessions/s/messages", **_raw(deep)), 400, "bad_request")
        await _reads_ok(client)

    async def test_a_message_of_many_blocks_is_refused(self, client: httpx.AsyncClient) -> None:
        await _session(client)
        blocks = [{"type": "text", "text": "a"}] * 2001
        response = await client.post(
            "/sessions/s/messages", json={"messages": [{"role": "user", "content": blocks}]}
        )
        _assert_field_error(response, "more than 2000 entries")


class TestNumbersAndPaths:
    @pytest.mark.parametrize("after_seq", [2**31, 2**63, 10**30])
    async def test_after_seq_beyond_integer_range(
        self, client: httpx.AsyncClient, after_seq: int
    ) -> None:
        await _session(client)
        response = await client.get(f"/sessions/s/messages?after_seq={after_seq}")
        _assert_field_error(response, "after_seq")

    @pytest.mark.parametrize("max_tokens", [10**24, 2**31])
    async def test_absurd_budgets_are_refused_fast(
        self, client: httpx.AsyncClient, max_tokens: int
    ) -> None:
        await _session(client)
        response = await client.get(f"/sessions/s/context?max_tokens={max_tokens}")
        _assert_field_error(response, "max_tokens")
        posted = {"messages": [user("hi")], "max_tokens": max_tokens}
        _assert_field_error(await _post(client, "/assemble-context", posted), "max_tokens")

    async def test_a_budget_above_the_window_is_the_window(self, client: httpx.AsyncClient) -> None:
        await _session(client)
        response = await client.get("/sessions/s/context?max_tokens=2000000000")
        assert response.status_code == 200
        assert response.json()["usage"]["budget"] == response.json()["usage"]["context_window"]

    @pytest.mark.parametrize("path", ["%00", "a%00b", "%F0%9F", "..", "%20x"])
    async def test_ids_no_session_can_have_are_404(
        self, client: httpx.AsyncClient, path: str
    ) -> None:
        for route in ("", "/messages", "/context", "/summaries"):
            response = await client.get(f"/sessions/{path}{route}")
            assert response.status_code in (404, 405), (route, response.text)
            assert response.status_code != 404 or response.json()["error"]["code"] in (
                "session_not_found",
                "not_found",
            )


class TestToolIds:
    async def test_one_id_twice_in_a_message(self, client: httpx.AsyncClient) -> None:
        await _session(client)
        messages = [
            user("go"),
            {"role": "assistant", "content": [_use("a"), _use("a")]},
        ]
        response = await _post(client, "/sessions/s/messages", {"messages": messages})
        _assert_field_error(response, "tool call id 'a' is already used")
        await _reads_ok(client)

    async def test_an_id_reused_in_a_later_turn(self, client: httpx.AsyncClient) -> None:
        await _session(client)
        turn = [tool_use("t1"), tool_result("t1", "ok")]
        assert (
            await _post(client, "/sessions/s/messages", {"messages": [user("go"), *turn]})
        ).status_code == 201
        response = await _post(client, "/sessions/s/messages", {"messages": turn})
        assert_error(response, 422, "invalid_message")
        assert response.json()["error"]["details"] == {"reused_tool_ids": ["t1"]}
        openai_turn = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "t1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        }
        response = await _post(client, "/sessions/s/messages", {"messages": [openai_turn]})
        assert_error(response, 422, "invalid_message")
        await _reads_ok(client)

    async def test_a_retry_is_not_a_reuse(self, client: httpx.AsyncClient) -> None:
        await _session(client)
        call = {**tool_use("t1"), "client_id": "c1"}
        for _ in range(2):
            response = await _post(client, "/sessions/s/messages", {"messages": [call]})
            assert response.status_code == 201, response.text

    async def test_a_mere_mention_of_an_id_is_no_clash(self, client: httpx.AsyncClient) -> None:
        await _session(client)
        mention = user('the log said "id": "t9"')
        call = tool_use("t9")
        response = await _post(client, "/sessions/s/messages", {"messages": [mention, call]})
        assert response.status_code == 201, response.text

    async def test_ids_are_well_formed(self, client: httpx.AsyncClient) -> None:
        await _session(client)
        for bad in ("", "a b", "é", "x" * 257, 5):
            message = {"role": "assistant", "content": [_use(bad)]}
            response = await _post(client, "/sessions/s/messages", {"messages": [message]})
            assert_error(response, 422, "validation_error")


class TestAuthFirst:
    async def test_unauthenticated_garbage_gets_401_not_422(self, make_client: Any) -> None:
        client = await make_client(api_keys="t:key")
        for body in (b"{not json", b'{"messages": "\\ud800"}', b"[" * 10_000):
            response = await client.post(
                "/sessions/s/messages", content=body, headers={"content-type": "application/json"}
            )
            assert_error(response, 401, "unauthorized")
            assert response.headers["www-authenticate"] == "Bearer"

    async def test_the_scheme_is_case_insensitive(self, make_client: Any) -> None:
        client = await make_client(api_keys="t:key")
        for scheme in ("Bearer", "bearer", "BEARER"):
            response = await client.get("/sessions", headers={"authorization": f"{scheme} key"})
            assert response.status_code == 200


# Any text a client may send, surrogates and NUL and all; metadata numbers of every kind.
HOSTILE_TEXT = st.text(
    alphabet=st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF), max_size=12
) | st.sampled_from(HOSTILE_STRINGS)
HOSTILE_NUMBER = st.integers() | st.floats()
HOSTILE_VALUE = st.recursive(
    st.none() | st.booleans() | HOSTILE_NUMBER | HOSTILE_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(HOSTILE_TEXT, inner, max_size=3),
    max_leaves=6,
)
HOSTILE_MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant"]), "content": HOSTILE_TEXT},
    optional={"metadata": st.dictionaries(HOSTILE_TEXT, HOSTILE_VALUE, max_size=3)},
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batches=st.lists(st.lists(HOSTILE_MESSAGE, min_size=1, max_size=3), max_size=4))
async def test_no_accepted_write_makes_a_later_read_fail(
    client: httpx.AsyncClient, batches: list[list[dict[str, Any]]]
) -> None:
    sid = f"h{abs(hash(json.dumps(batches, default=str))) % 10**12}"
    if (await _post(client, "/sessions", {"id": sid})).status_code != 201:
        return  # the same example again: its session is already there
    for batch in batches:
        document = json.dumps({"messages": batch}, allow_nan=True)
        response = await client.post(f"/sessions/{sid}/messages", **_raw(document))
        assert response.status_code in (201, 422), response.text
    await _reads_ok(client, sid)
    stored = (await client.get(f"/sessions/{sid}/messages?limit=1000")).json()["messages"]
    accepted = [m for batch in batches for m in batch]
    assert len(stored) <= len(accepted)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    system_prompt=HOSTILE_TEXT,
    metadata=st.dictionaries(HOSTILE_TEXT, HOSTILE_VALUE, max_size=3),
    tool_name=HOSTILE_TEXT,
)
async def test_no_accepted_session_update_makes_a_later_read_fail(
    client: httpx.AsyncClient, system_prompt: str, metadata: dict[str, Any], tool_name: str
) -> None:
    if (await client.post("/sessions", json={"id": "p"})).status_code == 201:
        await _post(client, "/sessions/p/messages", {"messages": [user("hello")]})
    tools = [{"name": tool_name, "description": "d", "input_schema": {"type": "object"}}]
    for body in ({"system_prompt": system_prompt}, {"metadata": metadata}, {"tools": tools}):
        document = json.dumps(body, allow_nan=True)
        response = await client.patch("/sessions/p", **_raw(document))
        assert response.status_code in (200, 422), response.text
        await _reads_ok(client, "p")


def _openai_turn(arguments: str) -> list[dict[str, Any]]:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}
    return [
        user("go"),
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "x" * 5000},
    ]


class TestToolArgumentStrings:
    @pytest.mark.parametrize(
        "arguments",
        [
            "[" * 100_000 + "]" * 100_000,
            '{"a": ' * 5_000 + "1" + "}" * 5_000,
            '{"s": "\\ud800"}',
            '{"n": NaN}',
            "1e999",
            '"\\u0000"',
        ],
    )
    async def test_json_inside_arguments_is_checked_too(
        self, client: httpx.AsyncClient, arguments: str
    ) -> None:
        await _session(client)
        messages = _openai_turn(arguments)
        for url, body in (
            ("/sessions/s/messages", {"messages": messages}),
            ("/assemble-context", {"messages": messages, "max_tokens": 60}),
            ("/summarize-context", {"messages": messages}),
            ("/count-tokens", {"messages": messages}),
        ):
            _assert_field_error(await _post(client, url, body), "arguments")
        await _reads_ok(client)

    async def test_arguments_that_are_not_json_stay_text(self, client: httpx.AsyncClient) -> None:
        await _session(client)
        response = await _post(client, "/sessions/s/messages", {"messages": _openai_turn("{oops")})
        assert response.status_code == 201
        await _reads_ok(client)
