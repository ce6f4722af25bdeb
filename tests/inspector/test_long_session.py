"""A session of 50,000 messages: the view paints in under a second, and a filter or a scroll
answers in under 100 ms (a virtualised list: only the rows near the viewport exist)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.inspector.conftest import LONG_COUNT
from tests.inspector.long_session import LIVE
from tests.inspector.pages import LOADED, sign_in
from tests.support.servers import Server

pytestmark = pytest.mark.slow
FIRST_PAINT_MS = 1000
INTERACTION_MS = 100
PAINTED = "foldwise:session-painted"  # the mark app/inspector/static/session.js sets
# The time from an input to the next frame painted after the list changed.
MEASURE = """async (act) => {
  const list = document.querySelector('.vlist');
  const start = performance.now();
  act === 'scroll' ? (list.scrollTop = list.scrollTop + 20 * list.clientHeight)
    : document.querySelector(act).click();
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  return performance.now() - start;
}"""


@pytest.fixture
def page(browser: Any, server: Server) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(30_000)
    sign_in(opened, server)
    opened.locator("table.sessions").wait_for()
    yield opened
    context.close()


def test_fifty_thousand_messages(page: Any, server: Server, long_session: str) -> None:
    timings = []
    for _ in range(5):  # the best of five: the first reads a cold cache, others share the CPU
        page.goto(f"{server.base_url}/inspect#/sessions/{long_session}")
        page.reload()
        page.wait_for_function(f"() => performance.getEntriesByName('{PAINTED}').length > 0")
        timings.append(page.evaluate(f"performance.getEntriesByName('{PAINTED}')[0].startTime"))
    assert min(timings) < FIRST_PAINT_MS, timings
    page.wait_for_function(LOADED)
    rows = page.locator(".vlist article.msg")
    assert rows.count() == LIVE + 1  # the sent ones (the pinned first message too), no more
    assert (
        page.locator(".group-summarized").get_attribute("data-count") == f"{LONG_COUNT - LIVE - 1}"
    )

    page.locator("#toggle-summarized").click()
    assert page.locator(".vlist-inner > *").count() < 100  # 49,989 listed, a screenful built
    took = {
        "scroll": page.evaluate(MEASURE, "scroll"),
        "filter off": page.evaluate(MEASURE, "button.chip[data-filter=summarized]"),
        "filter on": page.evaluate(MEASURE, "button.chip[data-filter=summarized]"),
        "scroll again": page.evaluate(MEASURE, "scroll"),
    }
    assert max(took.values()) < INTERACTION_MS, took
    page.wait_for_function(LOADED)
    seqs = page.locator(".vlist article.msg").evaluate_all(
        "rows => rows.map(r => Number(r.dataset.seq))"
    )
    assert seqs and all(1 < seq <= LONG_COUNT - LIVE for seq in seqs)  # summarized rows, read
