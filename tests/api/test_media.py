"""Media over HTTP: POST /count-tokens reports each image, document and audio block with its
count and whether the rule is the provider's own; appends store the same counts; a context
for another provider counts media by that provider's rule; old media is a cheap tier; and a
computer-use session of 60 screenshots fits by the provider's rule on every Claude generation
and is not emptied by over-counting on GPT-4o."""

from __future__ import annotations

import math
from typing import Any

import httpx
import pytest

from app.core.settings import Settings
from app.tokens.registry import load_registry
from tests.support.factories import append, create_session, user
from tests.support.media import anthropic_image, b64, image_bytes, openai_image, pdf_bytes

SCREEN = (1280, 800)
SHOT = b64(image_bytes(*SCREEN))


async def count(client: httpx.AsyncClient, model: str, *messages: dict[str, Any]) -> dict[str, Any]:
    response = await client.post("/count-tokens", json={"model": model, "messages": messages})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


class TestCountTokens:
    async def test_each_media_block_with_its_count(self, client: httpx.AsyncClient) -> None:
        pdf = {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf",
                       "data": b64(pdf_bytes(["one", "two"]))},
        }  # fmt: skip
        message = {"role": "user", "content": [anthropic_image(SHOT), pdf]}
        body = await count(client, "claude-sonnet-4-6", message)
        image, document = body["media"]
        assert image == {
            "path": "messages[0].content[0]", "kind": "image",
            "label": "PNG image 1280×800", "tokens": 1366, "exact": True,
        }  # fmt: skip
        assert document["label"] == "PDF, 2 pages" and document["exact"] is False
        assert body["exact"] is False and body["warnings"] == []

    async def test_exact_only_where_the_rule_is_the_providers_own(
        self, client: httpx.AsyncClient
    ) -> None:
        high = await count(client, "gpt-4o", user([openai_image(SHOT, detail="high")]))
        auto = await count(client, "gpt-4o", user([openai_image(SHOT)]))
        by_url = {"type": "image_url", "image_url": {"url": "https://x.test/a.png"}}
        url = await count(client, "gpt-4o", user([by_url]))
        assert high["exact"] is True and high["media"][0]["tokens"] == 85 + 170 * 6
        assert auto["exact"] is False  # the model picks low or high: counted as high
        assert url["exact"] is False
        (warning,) = url["warnings"]
        assert warning.startswith("messages[0].content[0]: ") and "https://x.test/a.png" in warning

    async def test_models_list_their_media_rule(self, client: httpx.AsyncClient) -> None:
        models = {m["name"]: m for m in (await client.get("/models")).json()["models"]}
        assert models["gpt-4o"]["media"] == "openai-tiles-4o"
        assert models["claude-sonnet-4-6"]["media"] == "claude-standard"

    async def test_appends_store_the_same_count(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="shots", model="gpt-4o")
        message = user([{"type": "text", "text": "look"}, openai_image(SHOT, detail="low")])
        (stored,) = await append(client, "shots", message)
        assert stored["token_count"] == (await count(client, "gpt-4o", message))["tokens"]


def screenshot_session(shots: int) -> list[dict[str, Any]]:
    """A computer-use loop: each step a click and a tool result holding a screenshot."""
    messages: list[dict[str, Any]] = [user("Book the cheapest flight to Lisbon in March.")]
    for step in range(shots):
        messages.append({
            "role": "assistant",
            "content": [
                {"type": "text", "text": f"Step {step}: clicking the next button."},
                {"type": "tool_use", "id": f"cu_{step}", "name": "computer",
                 "input": {"action": "left_click", "coordinate": [640, 400 + step]}},
            ],
        })  # fmt: skip
        messages.append({
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": f"cu_{step}",
                         "content": [anthropic_image(SHOT)]}],
        })  # fmt: skip
    return messages


def claude_published(width: int, height: int, long_edge: int, max_tokens: int) -> float:
    scale = min(1.0, long_edge / max(width, height), math.sqrt(max_tokens * 750 / (width * height)))
    return width * scale * height * scale / 750


def images_in(messages: list[dict[str, Any]]) -> int:
    found = 0
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            nested = block.get("content") if block.get("type") == "tool_result" else None
            inner = nested if isinstance(nested, list) else [block]
            found += sum(1 for b in inner if b.get("type") in ("image", "image_url"))
    return found


def claude_models() -> list[str]:
    registry = load_registry(Settings(_env_file=None))
    names = [m.name for m in registry.all() if m.provider == "anthropic"]
    return [*names, "claude-opus-4-8"]  # a newer generation: its family's (high-res) rule


@pytest.mark.parametrize("model", claude_models())
async def test_sixty_screenshots_fit_by_the_providers_rule_on_every_claude_generation(
    client: httpx.AsyncClient, model: str
) -> None:
    await create_session(client, id="cu", model=model)
    await append(client, "cu", *screenshot_session(60))
    budget = 40_000
    response = await client.get(
        "/sessions/cu/context", params={"format": "anthropic", "max_tokens": budget}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    rule = load_registry(Settings(_env_file=None)).get(model).media
    long_edge, cap = (2576, 4784) if rule == "claude-high-res" else (1568, 1600)
    per_image = claude_published(*SCREEN, long_edge, cap)
    sent = images_in(body["messages"])
    # The provider's bill: the text as counted (everything but the images), plus each image
    # by the published rule.
    text_only = [{**m, "content": strip_images(m["content"])} for m in body["messages"]]
    text_tokens = (await count(client, model, *text_only))["tokens"]
    system = body["usage"]["system_tokens"] + body["usage"]["tools_tokens"]
    assert text_tokens + system + sent * per_image <= budget * 1.01
    assert 3 <= sent < 60  # the newest screenshots are sent, not all of them
    assert body["usage"]["total_tokens"] <= budget
    # Old screenshots are the cheap tier: placeholders, before any fold.
    assert body["summarized"] is False and body["messages_included"] == 121
    assert "left out to save context; stored in message #3]" in str(body["messages"])
    newest = body["messages"][-1]["content"][0]["content"][0]
    assert newest["type"] == "image"
    stored = (await client.get("/sessions/cu/messages", params={"limit": 5})).json()["messages"]
    assert stored[2]["content"][0]["content"][0]["type"] == "image"  # unchanged


def strip_images(content: Any) -> Any:
    if not isinstance(content, list):
        return content
    out = []
    for block in content:
        if block.get("type") == "image":
            continue
        if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
            block = {**block, "content": strip_images(block["content"])}
        out.append(block)
    return out


async def test_sixty_screenshots_are_not_emptied_on_gpt_4o(client: httpx.AsyncClient) -> None:
    """By OpenAI's rule a 1280×800 screenshot is 85 + 170 × 6 = 1,105 tokens: 60 of them fit
    the 128k window's default budget (their base64 alone would be ~1.3M tokens)."""
    await create_session(client, id="cu", model="gpt-4o")
    await append(client, "cu", *screenshot_session(60))
    body = (await client.get("/sessions/cu/context", params={"format": "anthropic"})).json()
    assert (body["messages_included"], body["messages_total"]) == (121, 121)
    assert images_in(body["messages"]) == 60 and body["summary"] is None
    assert body["usage"]["message_tokens"] < 60 * 1105 + 121 * 40


class TestExactMode:
    """FOLDWISE_EXACT_COUNTS: POST /count-tokens asks the provider's count endpoint (the real
    SDKs against a fake on loopback) with the messages rendered as its API takes them."""

    @pytest.fixture
    def fake(self) -> Any:
        from tests.support.fake_openai_counts import FakeCounts

        server = FakeCounts(count=lambda request: 4242).start()
        yield server
        server.stop()

    async def exact_client(self, make_client: Any, fake: Any) -> httpx.AsyncClient:
        client: httpx.AsyncClient = await make_client(
            exact_counts=True,
            anthropic_api_key="sk-ant-test",
            anthropic_base_url=fake.base_url,
            openai_api_key="sk-test",
            openai_base_url=fake.openai_base_url,
        )
        return client

    @pytest.mark.parametrize("model", ["claude-sonnet-4-6", "gpt-4o"])
    async def test_the_providers_count_is_exact(self, make_client: Any, fake: Any, model: str):
        client = await self.exact_client(make_client, fake)
        message = user([{"type": "text", "text": "what is on screen?"}, anthropic_image(SHOT)])
        body = await count(client, model, message)
        assert (body["tokens"], body["exact"], body["counted_by"]) == (4242, True, "provider")
        assert body["media"][0]["label"] == "PNG image 1280×800"  # the rule's view, still given
        (request,) = fake.requests
        if model.startswith("claude"):
            assert request.path == "/v1/messages/count_tokens"
            assert request.body["messages"][0]["content"][1]["type"] == "image"
        else:
            assert request.path == "/v1/responses/input_tokens"
            assert request.body["input"][0]["content"][1]["type"] == "input_image"
        again = await count(client, model, message)  # cached by content: no second request
        assert again["tokens"] == 4242 and len(fake.requests) == 1

    @pytest.mark.parametrize("behaviour", ["429", "500", "malformed"])
    async def test_a_failing_endpoint_falls_back_to_the_rules(
        self, make_client: Any, fake: Any, behaviour: str
    ) -> None:
        fake.default = behaviour
        client = await self.exact_client(make_client, fake)
        body = await count(client, "gpt-4o", user([openai_image(SHOT, detail="high")]))
        assert body["counted_by"] == "rules" and body["tokens"] != 4242
        assert body["exact"] is True  # the published tile rule at `high`
        assert any("count endpoint did not answer" in w for w in body["warnings"])

    async def test_without_a_key_the_rules_count_with_a_warning(
        self, make_client: Any, fake: Any
    ) -> None:
        client = await make_client(exact_counts=True)
        body = await count(client, "claude-sonnet-4-6", user("hello"))
        assert body["counted_by"] == "rules" and fake.requests == []
        assert any("no API key for anthropic" in w for w in body["warnings"])

    async def test_gemini_has_no_exact_mode_its_count_stays_an_estimate(
        self, make_client: Any, fake: Any
    ) -> None:
        client = await self.exact_client(make_client, fake)
        message = user([{"type": "text", "text": "what is on screen?"}, anthropic_image(SHOT)])
        body = await count(client, "gemini-2.5-flash", message)
        assert (body["counted_by"], body["exact"], fake.requests) == ("rules", False, [])
        assert body["media_rule"] == "gemini-2"
        assert body["media"][0]["tokens"] == 258 * 6  # 1280×800: 3 × 2 tiles of 533 px
        (warning,) = body["warnings"]
        assert "cannot ask gemini's count endpoint" in warning and "an estimate" in warning
        gemini_3 = await count(client, "gemini-3-flash-preview", message)
        assert gemini_3["media"][0]["tokens"] == 1120 and gemini_3["exact"] is False
