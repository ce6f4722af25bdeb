"""Every block shows for what it is (tool calls of both shapes with name and arguments, tool
results, thinking collapsed with its size, images and documents as placeholders with the
server's token count), and contents too long for a line wrap instead of widening the page;
a long content opened moves the rows after it down."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from app.tokens.counter import TOKENS_PER_BLOCK
from tests.inspector.conftest import BLOCKS, KEY_A, LONG_TEXTS
from tests.inspector.pages import LOADED, PAINTED, api, open_session
from tests.support.servers import Server

pytestmark = pytest.mark.slow


@pytest.fixture
def page(browser: Any, server: Server) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    opened.set_default_timeout(20_000)
    open_session(opened, server, BLOCKS)
    yield opened
    context.close()
    assert errors == [], errors


def row(page: Any, seq: int) -> Any:
    """The row of message `seq`, scrolled into view and loaded."""
    page.locator(".vlist").evaluate(
        "(list, seq) => { const rows = [...list.querySelectorAll('article.msg')];"
        " if (!rows.some(r => r.dataset.seq == seq)) list.scrollTop = list.scrollHeight; }",
        seq,
    )
    found = page.locator(f"#msg-{seq}")
    found.scroll_into_view_if_needed()
    page.wait_for_function(LOADED)
    return found


def block_tokens(server: Server, block: dict[str, Any]) -> int:
    def count(content: list[Any]) -> int:
        response = httpx.post(
            server.base_url + "/count-tokens",
            json={"messages": [{"role": "user", "content": content}]},
            headers={"Authorization": f"Bearer {KEY_A}"},
        )
        return int(response.json()["tokens"])

    return count([block]) - count([])


def test_every_block_is_visible_for_what_it_is(page: Any, server: Server) -> None:
    stored = {m["seq"]: m for m in api(server, f"/sessions/{BLOCKS}/messages")["messages"]}
    first = row(page, 1)
    image = first.locator("[data-block=image]")
    image.locator(".tokens", has_text="≈").wait_for()
    assert f"≈{block_tokens(server, stored[1]['content'][1]):,} tokens" in image.inner_text()
    # A 1×1 PNG: one token by its pixels (Claude's width × height / 750), not by its bytes.
    assert block_tokens(server, stored[1]["content"][1]) == TOKENS_PER_BLOCK + 1
    assert "image/png" in image.inner_text()
    document = first.locator("[data-block=document]")
    document.locator(".tokens", has_text="≈").wait_for()
    assert f"≈{block_tokens(server, stored[1]['content'][2]):,} tokens" in document.inner_text()
    assert "spec.pdf" in document.inner_text() and "application/pdf" in document.inner_text()

    second = row(page, 2)
    thinking = second.locator("details[data-block=thinking]")
    assert thinking.get_attribute("open") is None  # collapsed
    size = len(stored[2]["content"][0]["thinking"])
    assert f"thinking · {size:,} chars" in thinking.locator("summary").inner_text()
    call = second.locator("[data-block=tool_use]")
    assert call.locator(".name").inner_text() == "read_file"
    assert json.loads(call.locator("pre").inner_text()) == {"path": "README.md"}
    assert "# Cart" in row(page, 3).locator("[data-block=tool_result]").inner_text()

    # OpenAI: content null, the call in tool_calls, its arguments a JSON string.
    openai = row(page, 4).locator("[data-block=tool_call]")
    assert openai.locator(".name").inner_text() == "search_docs"
    assert "call_9" in openai.inner_text()
    assert json.loads(openai.locator("pre").inner_text()) == {"query": "rounding", "limit": 3}
    assert row(page, 4).locator("a.pair").inner_text() == "→ result #5"
    assert row(page, 5).locator("a.pair").inner_text() == "← call #4"
    redacted = row(page, 6).locator("details[data-block=redacted_thinking]")
    assert redacted.get_attribute("open") is None and "chars" in redacted.inner_text()
    unknown = row(page, 7 + len(LONG_TEXTS)).locator("details[data-block=widget]")
    assert "widget block" in unknown.locator("summary").inner_text()


def test_long_unbroken_content_wraps(page: Any, server: Server) -> None:
    def overflow() -> int:
        return int(page.evaluate("document.documentElement.scrollWidth - window.innerWidth"))

    for offset, name in enumerate(LONG_TEXTS):
        long = row(page, 7 + offset)
        summary = long.locator("details.long > summary")
        assert summary.bounding_box()["width"] <= 1280, name
        assert overflow() <= 0, name
        summary.click()  # opened: the whole text, wrapped
        assert long.locator("details.long[open] pre").inner_text() == LONG_TEXTS[name]
        assert overflow() <= 0, name
        assert long.evaluate("r => r.scrollWidth <= r.clientWidth"), name


def test_an_opened_long_message_moves_the_rows_after_it(page: Any, server: Server) -> None:
    """The list lays its rows out again when one grows: the next row starts below the
    opened one, and the list scrolls to its new end without jumping back to the top."""
    seq = 7 + list(LONG_TEXTS).index("lines")
    long = row(page, seq)
    long.locator("details.long > summary").click()
    page.evaluate(PAINTED)
    opened = long.bounding_box()
    assert opened["height"] > 4000
    following = page.locator(f"#msg-{seq + 1}")  # mounted only if near the viewport
    assert following.count() == 0 or following.bounding_box()["y"] >= opened["y"] + opened["height"]
    # The opened row's end in view, and the row after it.
    long.evaluate("r => r.scrollIntoView({block: 'end'})")
    page.evaluate(PAINTED)
    page.evaluate(PAINTED)
    opened = long.bounding_box()
    assert opened["height"] > 4000  # still open: the row stayed mounted
    following.wait_for()
    assert following.bounding_box()["y"] >= opened["y"] + opened["height"]
    # To the end of the list: it stays there, the last row in view.
    vlist = page.locator(".vlist")
    bottom = vlist.evaluate("list => (list.scrollTop = list.scrollHeight) && list.scrollTop")
    for _ in range(3):
        page.evaluate(PAINTED)
    end = vlist.evaluate("list => [list.scrollTop, list.scrollHeight - list.clientHeight]")
    assert end[1] > opened["height"]  # the opened row is part of the list's height
    assert end[0] >= bottom > 0 and end[0] >= end[1] - 1
    assert long.locator("details.long[open]").count() == 1
    last = following.bounding_box()
    view = vlist.bounding_box()
    assert view["y"] <= last["y"] + last["height"] <= view["y"] + view["height"] + 1
