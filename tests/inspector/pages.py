"""Helpers of the Inspector's browser tests: the API's own answers, signing in, and the rows of
the virtualised message list (only those near the viewport are in the DOM)."""

from __future__ import annotations

import re
from typing import Any

import httpx

from tests.inspector.conftest import KEY_A
from tests.support.servers import Server


def api(server: Server, path: str, key: str = KEY_A, **params: Any) -> Any:
    response = httpx.get(
        server.base_url + path,
        params=params,
        headers={"Authorization": f"Bearer {key}"},
        timeout=60,
    )
    assert response.status_code == 200, response.text
    return response.json()


def number(text: str) -> int:
    return int(re.sub(r"[^0-9]", "", text))


def sign_in(page: Any, server: Server, key: str = KEY_A, fragment: str = "") -> None:
    page.goto(f"{server.base_url}/inspect{fragment}")
    page.get_by_label("API key", exact=True).fill(key)
    page.get_by_role("button", name="Use key").click()


def open_session(page: Any, server: Server, session_id: str) -> None:
    sign_in(page, server, fragment=f"#/sessions/{session_id}")
    page.locator(".vlist article.msg .body").first.wait_for()


# Every mounted row shows its stored message (read a page at a time as it comes into view).
LOADED = "() => [...document.querySelectorAll('.vlist article.msg')].every(a => a.dataset.role)"
# The list repaints on the animation frame after a scroll; two frames later the rows it mounts
# are the ones for the new position (reading earlier saw the old rows and skipped some).
PAINTED = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"


def listed(page: Any) -> dict[str, dict[str, str]]:
    """Every message row of the list (scrolled through once, top to bottom): id → its data."""
    rows: dict[str, dict[str, str]] = {}
    page.locator(".vlist").evaluate("list => (list.scrollTop = 0)")
    while True:
        page.evaluate(PAINTED)
        page.wait_for_function(LOADED)
        for row in page.locator(".vlist article.msg").evaluate_all(
            "rows => rows.map(r => ({...r.dataset}))"
        ):
            rows[row["id"]] = row
        done = page.locator(".vlist").evaluate(
            "list => { const before = list.scrollTop; list.scrollTop += list.clientHeight;"
            " return list.scrollTop === before; }"
        )
        if done:
            return rows


def open_groups(page: Any, groups: tuple[str, ...] = ("summarized", "dropped")) -> None:
    """Open the list's closed groups, so `listed` reaches their rows."""
    for group in groups:
        toggle = page.locator(f"#toggle-{group}")
        if toggle.count() and toggle.get_attribute("aria-expanded") == "false":
            toggle.click()
