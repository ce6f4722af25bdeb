"""POST /sessions/{id}/usage: calibration per model family, applied to later budgets."""

from __future__ import annotations

import math

import httpx
import pytest

from app.engine.calibration import ALPHA
from tests.support.factories import append, assert_error, context, create_session, turns
from tests.support.recording_summarizer import RecordingSummarizer


async def report(client: httpx.AsyncClient, session_id: str, **body: object) -> httpx.Response:
    return await client.post(f"/sessions/{session_id}/usage", json=body)


class TestCalibration:
    async def test_reports_refer_to_the_last_context_and_smooth_the_ratio(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s")
        await append(client, "s", *turns(3, words=20))
        estimate = (await context(client, "s"))["usage"]["estimated_tokens"]
        first = await report(client, "s", input_tokens=round(estimate * 1.2))
        assert first.status_code == 200, first.text
        learned = first.json()
        assert learned["estimated_tokens"] == estimate
        ratio = round(estimate * 1.2) / estimate
        assert learned["calibration"] == {"family": "anthropic", "ratio": ratio, "samples": 1}

        second = (await report(client, "s", input_tokens=estimate)).json()["calibration"]
        assert second["samples"] == 2
        assert second["ratio"] == pytest.approx((1 - ALPHA) * ratio + ALPHA * 1.0)

        usage = (await context(client, "s"))["usage"]
        assert usage["calibration"] == second
        assert usage["total_tokens"] == math.ceil(usage["estimated_tokens"] * second["ratio"])

    async def test_calibrated_total_is_held_to_the_budget(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s")
        await append(client, "s", *turns(20))
        estimate = (await context(client, "s", summarize="never", max_tokens=3000))["usage"]
        await report(client, "s", input_tokens=estimate["estimated_tokens"] * 2)
        body = await context(client, "s", summarize="never", max_tokens=3000)
        usage = body["usage"]
        assert usage["calibration"]["ratio"] == 2.0
        assert usage["total_tokens"] <= 3000 and usage["estimated_tokens"] <= 1500

    async def test_calibration_is_shared_by_the_tenants_sessions_of_one_family(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        for session_id in ("a", "b"):
            await create_session(client, id=session_id)
            await append(client, session_id, *turns(2, words=5))
        estimate = (await context(client, "a"))["usage"]["estimated_tokens"]
        await report(client, "a", input_tokens=estimate * 3)  # clamped to 2.0
        assert (await context(client, "b"))["usage"]["calibration"]["ratio"] == 2.0

    async def test_gemini_calibrates_gemini_models_not_openais_o200k_ones(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        """Gemini is counted with o200k_base like GPT-4o, but its tokenizer is not that one:
        its reports learn a ratio of its own."""
        for session_id, model in (("g", "gemini-2.5-flash"), ("g3", "gemini-3-flash-preview"),
                                  ("o", "gpt-4o")):  # fmt: skip
            await create_session(client, id=session_id, model=model)
            await append(client, session_id, *turns(2, words=20))
        estimate = (await context(client, "g"))["usage"]["estimated_tokens"]
        learned = (await report(client, "g", input_tokens=round(estimate * 1.5))).json()
        ratio = round(estimate * 1.5) / estimate
        assert learned["calibration"] == {"family": "gemini", "ratio": ratio, "samples": 1}
        assert (await context(client, "g3"))["usage"]["calibration"] == learned["calibration"]
        openai = (await context(client, "o"))["usage"]["calibration"]
        assert openai == {"family": "o200k_base", "ratio": 1.0, "samples": 0}

    async def test_no_context_served_for_that_model_is_409(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="s")
        response = await report(client, "s", input_tokens=100)
        assert_error(response, 409, "no_context_served")
        await context(client, "s")
        response = await report(client, "s", model="gpt-4o", input_tokens=100)
        assert_error(response, 409, "no_context_served")

    async def test_errors(self, client: httpx.AsyncClient) -> None:
        assert_error(await report(client, "nope", input_tokens=5), 404, "session_not_found")
        await create_session(client, id="s")
        assert_error(await report(client, "s", input_tokens=0), 422, "validation_error")
        assert_error(await report(client, "s", model="nope", input_tokens=5), 422, "unknown_model")

    async def test_unserved_parts_are_counted_with_the_served_context(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s")
        await append(client, "s", *turns(2, words=20))
        estimate = (await context(client, "s"))["usage"]["estimated_tokens"]
        tool = {"name": "lookup", "description": "Look it up", "input_schema": {"type": "object"}}
        new_input = [{"role": "user", "content": "And tomorrow? " * 5}]
        unserved = {"system": "You are an agent. " * 10, "messages": new_input, "tools": [tool]}
        counted = await client.post("/count-tokens", json={"messages": new_input, "tools": [tool]})
        system = await client.post("/count-tokens", json={"text": unserved["system"]})
        extra = counted.json()["tokens"] + system.json()["tokens"]
        learned = await report(client, "s", input_tokens=estimate + extra, unserved=unserved)
        assert learned.status_code == 200, learned.text
        assert learned.json()["estimated_tokens"] == estimate + extra
        assert learned.json()["calibration"]["ratio"] == 1.0, "the extras explain the count"

    async def test_unserved_parts_alone_need_no_context_served(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s")  # a first turn: nothing was served yet
        new_input = [{"role": "user", "content": "Hello there, how are you?"}]
        counted = (await client.post("/count-tokens", json={"messages": new_input})).json()
        learned = await report(client, "s", input_tokens=40, unserved={"messages": new_input})
        assert learned.status_code == 200, learned.text
        assert learned.json()["estimated_tokens"] == counted["tokens"]
        assert_error(
            await report(client, "s", input_tokens=40, unserved={}), 409, "no_context_served"
        )

    async def test_bad_unserved_parts_are_422(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="s")
        await append(client, "s", *turns(1))
        await context(client, "s")
        bad_message = {"messages": [{"role": "robot", "content": "x"}]}
        bad = await report(client, "s", input_tokens=9, unserved=bad_message)
        assert_error(bad, 422, "invalid_message")
        unknown_key = {"instructions": "x"}
        bad = await report(client, "s", input_tokens=9, unserved=unknown_key)
        assert_error(bad, 422, "validation_error")
