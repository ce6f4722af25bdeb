"""The Inspector end to end: key prompt, sessions list, session view against the API's own
numbers, the preview slider, tenant isolation, error states, actions, screenshots."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select, update

from app.core.db import create_engine
from app.models import Session, Summary
from tests.inspector.conftest import (
    DATABASE_URLS,
    DEMO,
    FOLD_DUE,
    KEY_A,
    KEY_B,
    SECRET,
    SEEDED,
    off_loop,
)
from tests.inspector.pages import api, listed, number, open_groups, open_session, sign_in
from tests.support.servers import ROOT, Server

pytestmark = pytest.mark.slow
SCREENSHOTS = ROOT / "docs"


@pytest.fixture
def page(browser: Any, server: Server) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    opened.set_default_timeout(15_000)
    yield opened
    context.close()
    assert errors == [], errors


def open_demo(page: Any, server: Server) -> None:
    open_session(page, server, DEMO)


def test_asks_for_a_key_then_lists_only_the_tenants_sessions(page: Any, server: Server) -> None:
    page.goto(f"{server.base_url}/inspect")
    page.get_by_role("heading", name="API key needed").wait_for()
    page.get_by_label("API key", exact=True).fill("not-a-key")
    page.get_by_role("button", name="Use key").click()
    page.get_by_text("That key was not accepted").wait_for()
    page.get_by_label("API key", exact=True).fill(KEY_A)
    page.get_by_role("button", name="Use key").click()
    page.get_by_role("heading", name="Sessions").wait_for()
    rows = page.locator("table.sessions tbody tr")
    listed = rows.evaluate_all("rows => rows.map(r => r.dataset.session)")
    own = [s["id"] for s in api(server, "/sessions", limit=200)["sessions"]]
    assert sorted(listed) == sorted(own) and set(SEEDED) <= set(listed)
    assert SECRET not in listed  # never beta's session
    page.get_by_label("Sort by").select_option("messages")
    listed_as(page, "messages|")
    counts = rows.evaluate_all("rows => rows.map(r => Number(r.cells[2].innerText))")
    assert counts == sorted(counts, reverse=True)
    page.get_by_label("Search by id").fill("nothing-like-this")
    listed_as(page, "messages|nothing-like-this")
    assert rows.count() == 0
    page.get_by_label("Search by id").fill("demo")
    listed_as(page, "messages|demo")
    assert rows.count() == 1
    page.get_by_role("link", name=DEMO).click()
    page.locator("#session-title").wait_for()
    assert page.locator("#session-title").inner_text() == DEMO


def listed_as(page: Any, listing: str) -> None:
    """Wait until the list shows the server's answer for `sort|search`."""
    page.locator(f'table.sessions[aria-busy="false"][data-listing="{listing}"]').wait_for()


def test_sorting_by_tokens_over_several_pages_is_the_apis_order(page: Any, server: Server) -> None:
    expected: list[str] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"sort": "total_tokens", "order": "desc", "limit": 1}
        body = api(server, "/sessions", **(params | ({"cursor": cursor} if cursor else {})))
        expected += [s["id"] for s in body["sessions"]]
        if not (cursor := body["next_cursor"]):
            break
    assert set(SEEDED) <= set(expected)
    sign_in(page, server, fragment="?page_size=1")
    page.get_by_role("heading", name="Sessions").wait_for()
    page.get_by_label("Sort by").select_option("tokens")
    listed_as(page, "tokens|")
    rows = page.locator("table.sessions tbody tr")
    assert rows.count() == 1  # one page of one
    more = page.get_by_role("button", name="Load more")
    for loaded in range(2, len(expected) + 1):
        more.click()
        page.locator(f"table.sessions tbody tr:nth-child({loaded})").wait_for()
    listed_as(page, "tokens|")
    page.locator("#load-more").wait_for(state="hidden")
    assert rows.evaluate_all("rows => rows.map(r => r.dataset.session)") == expected
    tokens = rows.evaluate_all(
        "rows => rows.map(r => Number(r.cells[3].innerText.replace(/\\D/g, '')))"
    )
    assert tokens == sorted(tokens, reverse=True)


def test_the_bar_and_every_status_match_the_api(page: Any, server: Server) -> None:
    open_demo(page, server)
    context = api(server, f"/sessions/{DEMO}/context", explain="true", dry_run="true")
    usage = context["usage"]
    legend = page.locator("#usage-legend")
    for part, field in [
        ("system", "system_tokens"),
        ("tools", "tools_tokens"),
        ("summary", "summary_tokens"),
        ("messages", "message_tokens"),
        ("reserved", "reserved_output_tokens"),
        ("total", "total_tokens"),
        ("budget", "budget"),
        ("window", "context_window"),
    ]:
        shown = legend.locator(f"[data-usage={part}] dd").inner_text()
        assert number(shown) == usage[field], (part, shown)
    segments = page.locator(".bar .seg").evaluate_all(
        "segs => Object.fromEntries(segs.map(s => [s.dataset.part, Number(s.dataset.tokens)]))"
    )
    assert segments["summary"] == usage["summary_tokens"] > 0
    assert segments["messages"] == usage["message_tokens"]
    assert page.get_by_role("group", name=re.compile("Budget of")).count() == 1
    # Focusing a part of the bar says what it is, on screen.
    page.locator(".bar .seg.summary").focus()
    assert (
        f"Summary: {usage['summary_tokens']:,} tokens" in page.locator("#bar-readout").inner_text()
    )

    expected = {e["id"]: e["status"] for e in context["explain"] if e["status"] != "synthetic"}
    page.locator("#toggle-summarized").click()
    # Sent messages first, then the summarized ones, grouped.
    order = page.locator(".vlist-inner > *").evaluate_all(
        "rows => rows.sort((a, b) => Number(a.getAttribute('aria-posinset')) -"
        " Number(b.getAttribute('aria-posinset'))).map(r => r.dataset.group || r.dataset.status)"
    )
    assert order[0] == "sent" and order.index("summarized") > order.index("included")
    statuses = {key: row["status"] for key, row in listed(page).items()}
    assert statuses == expected
    assert {"summarized", "included"} <= set(statuses.values())
    # Tool calls link to their results and back.
    page.locator(".vlist").evaluate("list => (list.scrollTop = 0)")
    page.locator(".group-sent").wait_for()
    first_call = page.locator("a.pair", has_text="→ result").first.element_handle()
    target = first_call.get_attribute("href")
    assert target is not None
    first_call.click()
    assert page.evaluate("document.activeElement.id") == target[1:]
    # Filters: only summarized messages, then only the assistant's.
    for name in ("included",):
        page.locator(f"button.chip[data-filter={name}]").click()
    rows = listed(page)
    assert len(rows) == list(expected.values()).count("summarized")
    page.get_by_label("Role").select_option("assistant")
    page.locator("#shown", has_text="listed").wait_for()
    assert {row["role"] for row in listed(page).values()} == {"assistant"}
    # The summary history: every version, each with a diff against the previous one.
    history = api(server, f"/sessions/{DEMO}/summaries")["summaries"]
    page.locator("#history details.version").first.wait_for()
    assert page.locator("#history details.version").count() == len(history) >= 1
    assert page.locator("#cache-reason").inner_text() == usage["cache"]["reason"]


def test_another_budget_is_a_dry_run_labelled_as_such(page: Any, server: Server) -> None:
    before = api(server, f"/sessions/{DEMO}")["summary"]["version"]
    open_demo(page, server)
    page.get_by_label("Budget in tokens").fill("700")
    page.get_by_label("Budget in tokens").press("Enter")
    page.locator("#mode.preview", has_text="max_tokens=700").wait_for()
    page.locator("[data-usage=budget] dd", has_text="700").wait_for()
    dry = api(server, f"/sessions/{DEMO}/context", explain="true", dry_run="true", max_tokens=700)
    page.locator("#toggle-summarized").click()
    statuses = {key: row["status"] for key, row in listed(page).items()}
    assert statuses == {e["id"]: e["status"] for e in dry["explain"] if e["status"] != "synthetic"}
    assert (
        number(page.locator("[data-usage=total] dd").inner_text()) == dry["usage"]["total_tokens"]
    )
    # Another model, same rule, and nothing stored changes.
    page.get_by_label("Model").select_option("gpt-4o")
    page.locator("[data-usage=window] dd", has_text="128,000").wait_for()
    assert api(server, f"/sessions/{DEMO}")["summary"]["version"] == before
    assert number(page.locator("#session-facts").get_attribute("data-version") or "0") == before


def test_a_preview_marks_the_messages_whose_status_changes(page: Any, server: Server) -> None:
    default = api(server, f"/sessions/{DEMO}/context", explain="true", dry_run="true")
    smaller = api(
        server, f"/sessions/{DEMO}/context", explain="true", dry_run="true", max_tokens=700
    )
    was = {e["id"]: e["status"] for e in default["explain"] if e["status"] != "synthetic"}
    changed = {
        e["id"]: was[e["id"]]
        for e in smaller["explain"]
        if e["status"] != "synthetic" and was[e["id"]] != e["status"]
    }
    assert changed
    open_demo(page, server)
    assert page.locator(".vlist article.msg.changed").count() == 0  # the default marks nothing
    page.get_by_label("Budget in tokens").fill("700")
    page.get_by_label("Budget in tokens").press("Enter")
    page.locator("#mode.preview", has_text="max_tokens=700").wait_for()
    count = page.locator("#changed-count", has_text="change")
    assert number(count.inner_text()) == len(changed)
    open_groups(page)
    rows = listed(page)
    assert {key: row["was"] for key, row in rows.items() if "was" in row} == changed
    marked = page.locator(".vlist article.msg.changed").first
    assert marked.locator(".badge.was").inner_text() == f"was {marked.get_attribute('data-was')}"


def test_the_bar_marks_the_threshold(page: Any, server: Server) -> None:
    """The fold threshold (threshold × window) on the bar's scale (budget + reserved output):
    its end by default, inside the bar for a budget as large as the window."""

    def placed() -> float:
        return float(
            page.locator(".bar").evaluate(
                "bar => { const box = bar.getBoundingClientRect();"
                " const mark = bar.querySelector('.mark.threshold').getBoundingClientRect();"
                " return (mark.left + mark.width / 2 - box.left) / box.width; }"
            )
        )

    open_demo(page, server)
    usage = api(server, f"/sessions/{DEMO}/context", dry_run="true")["usage"]
    threshold = int(usage["threshold"] * usage["context_window"])
    mark = page.locator(".bar .mark.threshold")
    assert number(mark.get_attribute("data-tokens") or "") == threshold
    assert abs(placed() - 1) < 0.01
    window = usage["context_window"]
    page.get_by_label("Budget in tokens").fill(str(window))
    page.get_by_label("Budget in tokens").press("Enter")
    page.locator("#mode.preview", has_text=f"max_tokens={window}").wait_for()
    usage = api(server, f"/sessions/{DEMO}/context", dry_run="true", max_tokens=window)["usage"]
    share = threshold / (usage["budget"] + usage["reserved_output_tokens"])
    assert 0.5 < share < 1
    assert abs(placed() - share) < 0.01


def test_the_slider_and_the_number_agree(page: Any, server: Server) -> None:
    open_demo(page, server)
    slider = page.locator("#budget")
    box = page.get_by_label("Budget in tokens")
    assert slider.input_value() == box.input_value()
    box.fill("2000")
    box.press("Enter")
    page.locator("#mode.preview", has_text="max_tokens=2000").wait_for()
    assert (slider.input_value(), box.input_value()) == ("2000", "2000")
    page.locator("#budget").fill("3001")
    page.locator("#mode.preview", has_text="max_tokens=3001").wait_for()
    assert (slider.input_value(), box.input_value()) == ("3001", "3001")


def test_another_tenants_session_is_not_reachable(page: Any, server: Server) -> None:
    sign_in(page, server, fragment=f"#/sessions/{SECRET}")
    page.get_by_role("heading", name="Not found").wait_for()
    assert "private task" not in page.content()
    page.get_by_role("link", name="All sessions").click()
    page.locator("table.sessions").wait_for()
    assert page.locator(f"tr[data-session={SECRET}]").count() == 0
    # Beta's own key does see it.
    page.get_by_role("button", name="Forget key").click()
    page.get_by_label("API key", exact=True).fill(KEY_B)
    page.get_by_role("button", name="Use key").click()
    page.locator(f"tr[data-session={SECRET}]").wait_for()


def test_an_unreachable_server_is_an_error_in_the_page(page: Any, server: Server) -> None:
    sign_in(page, server)
    page.locator("table.sessions").wait_for()
    page.route("**/sessions**", lambda route: route.abort())
    page.goto(f"{server.base_url}/inspect#/sessions/{DEMO}")
    page.reload()
    page.get_by_role("heading", name="Server unreachable").wait_for()
    page.unroute("**/sessions**")
    page.get_by_role("button", name="Retry").click()
    page.locator("#session-title").wait_for()


def test_fold_now_with_a_focus_and_clear_ask_first(page: Any, server: Server) -> None:
    sign_in(page, server, key=KEY_B, fragment=f"#/sessions/{SECRET}")
    page.locator("#session-title").wait_for()
    httpx.post(
        f"{server.base_url}/sessions/{SECRET}/messages",
        headers={"Authorization": f"Bearer {KEY_B}"},
        json={
            "messages": [
                {"role": "assistant" if i % 2 else "user", "content": f"step {i} " * 30}
                for i in range(1, 20)
            ]
        },
    ).raise_for_status()
    page.reload()
    page.locator("#session-title").wait_for()
    page.get_by_role("button", name="Clear context…").click()
    page.get_by_role("button", name="Cancel").click()
    page.get_by_role("button", name="Fold now…").click()
    page.get_by_label("Focus (optional)").fill("keep the step numbers")
    page.get_by_role("dialog").get_by_role("button", name="Fold").click()
    page.locator("#action-status", has_text="Folded").wait_for()
    after = api(server, f"/sessions/{SECRET}", key=KEY_B)["summary"]
    assert after is not None and after["method"] != "clear"
    page.get_by_role("button", name="Clear context…").click()
    page.get_by_role("dialog").get_by_role("button", name="Clear").click()
    page.locator("#action-status", has_text="Cleared.").wait_for()
    history = api(server, f"/sessions/{SECRET}/summaries", key=KEY_B)["summaries"]
    assert history[0]["method"] == "clear"


@pytest.mark.parametrize("width", [390])
def test_phone_width_and_keyboard(browser: Any, server: Server, width: int) -> None:
    context = browser.new_context(viewport={"width": width, "height": 800})
    page = context.new_page()
    try:
        sign_in(page, server, fragment=f"#/sessions/{DEMO}")
        page.locator(".vlist article.msg").first.wait_for()
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0
        page.goto(f"{server.base_url}/inspect#/sessions/{DEMO}")
        page.locator(".vlist article.msg").first.wait_for()
        reached = set()
        for _ in range(40):
            page.keyboard.press("Tab")
            reached.add(
                page.evaluate("document.activeElement.id || document.activeElement.innerText")
            )
        assert {"action-fold", "action-clear", "model", "budget"} <= reached
    finally:
        context.close()


def test_screenshots(browser: Any, server: Server, request: pytest.FixtureRequest) -> None:
    """`make screenshots` (FOLDWISE_SCREENSHOTS=1) writes docs/inspector-*.png from SQLite."""
    if not os.environ.get("FOLDWISE_SCREENSHOTS") or "postgres" in request.node.callspec.id:
        pytest.skip("screenshots are taken by `make screenshots`")
    for scheme in ("light", "dark"):
        context = browser.new_context(
            viewport={"width": 1280, "height": 800}, color_scheme=scheme, device_scale_factor=1
        )
        page = context.new_page()
        sign_in(page, server)
        page.locator("table.sessions").wait_for()
        if scheme == "light":
            page.screenshot(path=str(SCREENSHOTS / "inspector-sessions.png"))
        page.goto(f"{server.base_url}/inspect#/sessions/{FOLD_DUE}")
        page.locator(".vlist article.msg .body").first.wait_for()
        page.screenshot(path=str(SCREENSHOTS / f"inspector-session-{scheme}.png"))
        context.close()
    for path in Path(SCREENSHOTS).glob("inspector-*.png"):
        assert path.stat().st_size < 300_000, path


async def _bill_newest_summary(database_url: str, session_id: str, usage: dict[str, Any]) -> None:
    """Give the session's newest summary version the usage of an LLM fold (the server under
    test has no provider to fold with)."""
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            pk = select(Session.pk).where(Session.external_id == session_id).scalar_subquery()
            newest = select(func.max(Summary.version)).where(Summary.session_id == pk)
            await connection.execute(
                update(Summary)
                .where(Summary.session_id == pk, Summary.version == newest.scalar_subquery())
                .values(usage=usage, method="llm", model="claude-sonnet-4-6")
            )
    finally:
        await engine.dispose()


def test_each_summary_version_shows_what_its_fold_was_billed(page: Any, server: Server) -> None:
    session_id = "billed-fold"
    with httpx.Client(
        base_url=server.base_url, headers={"Authorization": f"Bearer {KEY_A}"}, timeout=30
    ) as alpha:
        alpha.post("/sessions", json={"id": session_id}).raise_for_status()
        turns = [{"role": "user", "content": f"step {i}: " + "detail " * 40} for i in range(12)]
        alpha.post(f"/sessions/{session_id}/messages", json={"messages": turns})
        alpha.post(f"/sessions/{session_id}/summarize", json={}).raise_for_status()
    usage = {
        "input_tokens": 412, "cache_read_tokens": 48_210, "cache_write_tokens": 0,
        "output_tokens": 596, "prompt": "cached_prefix", "prompt_note": None,
    }  # fmt: skip
    off_loop(asyncio.run, _bill_newest_summary(DATABASE_URLS[server.base_url], session_id, usage))
    (version,) = api(server, f"/sessions/{session_id}/summaries")["summaries"]
    assert version["usage"] == usage
    open_session(page, server, session_id)
    shown = page.locator("#history .usage[data-prompt=cached_prefix]")
    shown.wait_for()
    text = shown.inner_text()
    assert "on the cached prefix" in text and "claude-sonnet-4-6" in text
    assert all(f"{n:,}" in text for n in (412, 48_210, 596))
