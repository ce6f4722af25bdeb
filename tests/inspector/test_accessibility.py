"""axe-core finds nothing serious or critical in the Inspector, light and dark, and a person
with only a keyboard reaches every part of the session view.

axe-core comes from the npm registry through tests/inspector/axe/package-lock.json (`npm ci`,
once; the lockfile holds no registry address) and is injected by Playwright. Needs npm:
skipped without it on a laptop, failed in CI."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.inspector.conftest import BLOCKS, DEMO, FOLD_DUE, KEY_A
from tests.inspector.pages import sign_in
from tests.support.servers import Server

pytestmark = pytest.mark.slow
AXE = Path(__file__).resolve().parent / "axe"
IMPACTS = {"serious", "critical"}


@pytest.fixture(scope="module")
def axe_source() -> str:
    npm = shutil.which("npm")
    if npm is None:
        message = "npm is not on PATH (axe-core is installed by npm ci)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    installed = AXE / "node_modules" / ".package-lock.json"
    lock = AXE / "package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < lock.stat().st_mtime:
        subprocess.run(
            [npm, "ci", "--prefer-offline", "--no-audit", "--no-fund"],
            cwd=AXE,
            check=True,
            capture_output=True,
            timeout=300,
        )
    return (AXE / "node_modules" / "axe-core" / "axe.min.js").read_text("utf-8")


@pytest.fixture(params=["light", "dark"])
def scheme(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def violations(page: Any, axe_source: str) -> list[dict[str, Any]]:
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=axe_source)
    found: list[dict[str, Any]] = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target.join(' '))"
        ".slice(0, 5)}))"
    )
    return [v for v in found if v["impact"] in IMPACTS]


def test_axe_finds_nothing_serious(
    browser: Any, server: Server, axe_source: str, scheme: str
) -> None:
    # axe runs as an inline script: the test's context lets it past the page's CSP.
    context = browser.new_context(
        viewport={"width": 1280, "height": 900}, color_scheme=scheme, bypass_csp=True
    )
    page = context.new_page()
    page.set_default_timeout(20_000)
    try:
        sign_in(page, server)
        page.locator("table.sessions").wait_for()
        assert violations(page, axe_source) == [], "sessions list"
        for session_id in (DEMO, FOLD_DUE, BLOCKS):
            page.goto(f"{server.base_url}/inspect#/sessions/{session_id}")
            page.locator(f"#session-title:text-is('{session_id}')").wait_for()
            page.locator(".vlist article.msg .body").first.wait_for()
            page.locator("#history").wait_for()
            for toggle in page.locator(".group-row button").all():
                toggle.click()
            assert violations(page, axe_source) == [], session_id
            page.get_by_role("tab", name="Request").click()
            assert violations(page, axe_source) == [], f"{session_id} request"
        page.get_by_role("button", name="Clear context…").click()
        assert violations(page, axe_source) == [], "confirmation dialog"
    finally:
        context.close()


@pytest.fixture
def page(browser: Any, server: Server) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(20_000)
    yield opened
    context.close()


def press_until(page: Any, key: str, target: str, limit: int = 80) -> None:
    """Press `key` until the focused element matches the CSS selector `target`."""
    for _ in range(limit):
        if page.evaluate("t => document.activeElement.matches(t)", target):
            return
        page.keyboard.press(key)
    raise AssertionError(f"{target} not reached with {key}")


def test_keyboard_only(page: Any, server: Server) -> None:
    page.goto(f"{server.base_url}/inspect")
    page.get_by_label("API key", exact=True).wait_for()
    assert page.evaluate("document.activeElement.id") == "api-key"
    page.keyboard.type(KEY_A)
    page.keyboard.press("Enter")
    page.locator("table.sessions").wait_for()
    press_until(page, "Tab", f"a[href='#/sessions/{DEMO}']")
    page.keyboard.press("Enter")
    page.locator(".vlist article.msg .body").first.wait_for()
    # The bar: each part is focusable and says what it is on screen.
    press_until(page, "Tab", ".bar .seg.summary")
    assert "Summary:" in page.locator("#bar-readout").inner_text()
    # Tabs: the arrow keys move between them.
    press_until(page, "Tab", "#tab-messages")
    page.keyboard.press("ArrowRight")
    assert page.locator("#panel-request").is_visible()
    page.keyboard.press("ArrowLeft")
    assert page.locator("#panel-messages").is_visible()
    # A group opens with Enter; a tool-call link jumps to its result and focuses it.
    press_until(page, "Tab", "#toggle-summarized")
    page.keyboard.press("Enter")
    assert page.locator("#toggle-summarized").get_attribute("aria-expanded") == "true"
    page.keyboard.press("Shift+Tab")
    press_until(page, "Shift+Tab", "a.pair")
    target = page.evaluate("document.activeElement.getAttribute('href')")
    page.keyboard.press("Enter")
    assert page.evaluate("'#' + document.activeElement.id") == target
    # The list scrolls with the keyboard.
    press_until(page, "Tab", ".vlist")
    page.keyboard.press("Home")
    page.wait_for_function("() => document.querySelector('.vlist').scrollTop === 0")
    page.keyboard.press("PageDown")
    page.wait_for_function("() => document.querySelector('.vlist').scrollTop > 0")
    # An action asks first, and Escape cancels it.
    press_until(page, "Shift+Tab", "#action-clear")
    page.keyboard.press("Enter")
    page.get_by_role("dialog").wait_for()
    page.keyboard.press("Escape")
    page.get_by_role("dialog").wait_for(state="hidden")
    assert page.evaluate("document.activeElement.id") == "action-clear"  # focus comes back
