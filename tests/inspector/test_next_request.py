"""The Inspector's default view is the next request: a due fold is said plainly and shown
done (a dry run, nothing stored); the cached-prefix marker sits where `prefix_tokens` ends;
the request tab holds the provider's exact body; the small numbers are right."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.inspector.conftest import DEMO, KEY_A, seed_fold_due
from tests.inspector.pages import api, listed, number, open_groups, open_session, sign_in
from tests.support.official_types import assert_official_gemini
from tests.support.servers import Server

pytestmark = pytest.mark.slow


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    opened.set_default_timeout(20_000)
    yield opened
    context.close()
    assert errors == [], errors


def post(server: Server, path: str, body: Any = None) -> Any:
    response = httpx.post(
        server.base_url + path, json=body, headers={"Authorization": f"Bearer {KEY_A}"}, timeout=60
    )
    assert response.status_code in (200, 201), response.text
    return response.json()


def statuses(page: Any) -> dict[str, str]:
    open_groups(page)
    return {key: row["status"] for key, row in listed(page).items()}


def test_a_due_fold_is_shown_done_and_nothing_is_stored(page: Any, server: Server) -> None:
    session_id = "fold-due-then-sent"  # FOLD_DUE's twin: this test sends its next request
    with httpx.Client(
        base_url=server.base_url, headers={"Authorization": f"Bearer {KEY_A}"}
    ) as alpha:
        seed_fold_due(alpha, session_id)
    before = api(server, f"/sessions/{session_id}")
    assert before["summary"] is None
    open_session(page, server, session_id)
    note = page.locator("#fold-note")
    assert note.get_attribute("data-fold") == "computed"
    assert "This request folds" in note.inner_text()
    assert page.locator("#mode").inner_text() == "exactly what the next request sends"
    shown = statuses(page)
    assert "summarized" in shown.values() and "dropped" not in shown.values()
    assert number(page.locator("[data-usage=summary] dd").inner_text()) > 0
    assert api(server, f"/sessions/{session_id}") == before  # the page stored nothing

    # What the page showed is what the next real request sends.
    real = api(server, f"/sessions/{session_id}/context", explain="true")
    assert real["summarized"] is True
    assert shown == {e["id"]: e["status"] for e in real["explain"] if e["status"] != "synthetic"}
    legend = page.locator("#usage-legend")
    for part, field in [("summary", "summary_tokens"), ("messages", "message_tokens")]:
        assert (
            number(legend.locator(f"[data-usage={part}] dd").inner_text()) == real["usage"][field]
        )


@pytest.mark.parametrize(
    ("session_settings", "fmt"),
    [({}, "anthropic"), ({"summary_placement": "messages"}, "anthropic"), ({}, "openai")],
)
def test_the_cached_prefix_ends_where_prefix_tokens_ends(
    page: Any, server: Server, session_settings: dict[str, Any], fmt: str
) -> None:
    """Tools, system prompt and summary count first: the marker's running total is the
    server's `prefix_tokens`, and it sits after the last message of that prefix."""
    session_id = f"cache-{fmt}-{len(session_settings)}"
    tools = [{"name": "run", "description": "Run a command.", "input_schema": {"type": "object"}}]
    post(
        server,
        "/sessions",
        {
            "id": session_id,
            "system_prompt": "Be exact. " * 40,
            "tools": tools,
            "settings": session_settings,
        },
    )
    turns = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}: " + "word " * 60}
        for i in range(30)
    ]
    post(server, f"/sessions/{session_id}/messages", {"messages": turns})
    post(server, f"/sessions/{session_id}/summarize", {})  # a summary, counted before messages
    api(server, f"/sessions/{session_id}/context", format=fmt)  # the previous context
    post(server, f"/sessions/{session_id}/messages", {"messages": turns[:2]})
    dry = api(server, f"/sessions/{session_id}/context", format=fmt, explain="true", dry_run="true")
    prefix = dry["usage"]["cache"]["prefix_tokens"]
    assert prefix > dry["usage"]["system_tokens"] + dry["usage"]["tools_tokens"]

    open_session(page, server, session_id)
    if fmt != "anthropic":
        page.get_by_label("Format").select_option(fmt)
        page.locator("#panel-request").get_by_text("chat/completions").wait_for(state="attached")
    edge = page.locator("#cache-edge")
    assert number(edge.get_attribute("data-tokens") or "") == prefix
    before = int(edge.get_attribute("aria-posinset") or 0) - 1  # the row above it
    previous = page.locator(f'.vlist-inner > [aria-posinset="{before}"]').get_attribute("data-seq")
    sent = [e for e in dry["explain"] if e["status"] in ("included", "pruned", "truncated")]
    new_seqs = {
        m["seq"] for m in api(server, f"/sessions/{session_id}/messages", after_seq=30)["messages"]
    }
    last_cached = max(e["seq"] for e in sent if e["seq"] not in new_seqs)
    assert int(previous or 0) == last_cached


def test_the_request_tab_is_the_exact_provider_body(page: Any, server: Server) -> None:
    open_session(page, server, DEMO)
    page.get_by_role("tab", name="Request").click()
    code = page.locator("#request-code")
    ctx = api(server, f"/sessions/{DEMO}/context", dry_run="true")
    expected = {
        "model": ctx["model"],
        "max_tokens": ctx["usage"]["reserved_output_tokens"],
        "system": ctx["system"],
        "messages": ctx["messages"],
        "tools": ctx["tools"],
    }
    assert json.loads(code.inner_text()) == expected
    breakpoints = json.dumps(expected).count('"cache_control"')
    assert breakpoints > 0
    assert (
        f"{breakpoints} cache_control breakpoints" in page.locator("#request-summary").inner_text()
    )
    page.get_by_role("button", name="Python").click()
    python = code.inner_text()
    assert "client.messages.create(**body)" in python
    literal = python.split("body = ", 1)[1].rsplit("\nclient = ", 1)[0]
    assert ast.literal_eval(literal) == expected
    page.get_by_role("button", name="curl").click()
    curl = code.inner_text()
    assert "anthropic-version: 2023-06-01" in curl
    assert (
        json.loads(curl.split("<<'FOLDWISE_BODY'\n", 1)[1].rsplit("\nFOLDWISE_BODY", 1)[0])
        == expected
    )
    page.get_by_role("button", name="TypeScript").click()
    typescript = code.inner_text()
    assert json.loads(typescript.split("const body = ", 1)[1].split(";\n", 1)[0]) == expected
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.get_by_role("button", name="Copy").click()
    page.locator("#copy-status", has_text="Copied as typescript").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == typescript

    # OpenAI chat: the system message leads `messages`; no top-level system.
    page.get_by_label("Format").select_option("openai")
    page.locator("#request-summary", has_text="chat/completions").wait_for(state="attached")
    page.get_by_role("tab", name="Request").click()
    body = json.loads(page.locator("#request-code").inner_text())
    openai = api(server, f"/sessions/{DEMO}/context", dry_run="true", format="openai")
    assert body == {
        "model": openai["model"],
        "max_completion_tokens": openai["usage"]["reserved_output_tokens"],
        "messages": openai["messages"],
        "tools": openai["tools"],
    }
    assert body["messages"][0]["role"] == "system"

    # Gemini: contents, the system as systemInstruction, the model in the URL.
    page.get_by_label("Format").select_option("gemini")
    page.locator("#request-summary", has_text=":generateContent").wait_for(state="attached")
    page.get_by_role("tab", name="Request").click()
    body = json.loads(page.locator("#request-code").inner_text())
    gemini = api(server, f"/sessions/{DEMO}/context", dry_run="true", format="gemini")
    assert body["contents"] == gemini["messages"]
    assert body["systemInstruction"] == {"parts": [{"text": gemini["system"]}]}
    assert body["generationConfig"] == {
        "maxOutputTokens": gemini["usage"]["reserved_output_tokens"]
    }
    assert (
        f"models/{gemini['model']}:generateContent" in page.locator("#request-summary").inner_text()
    )
    assert_official_gemini(body["contents"], gemini["system"], body.get("tools"))


def test_the_smaller_numbers(page: Any, server: Server) -> None:
    session_id = "small-numbers"
    post(
        server,
        "/sessions",
        {
            "id": session_id,
            "system_prompt": "Be exact. " * 50,
            "settings": {"threshold": 0.012, "reserved_output_tokens": 100},
        },
    )
    turns = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"} for i in range(25)
    ]
    post(server, f"/sessions/{session_id}/messages", {"messages": turns})
    post(server, f"/sessions/{session_id}/clear")
    open_session_empty(page, server, session_id)
    facts = page.locator("#session-facts").inner_text()
    assert "25 messages stored, 25 before the clear marker · 0 tokens after it" in facts
    assert "Threshold 1.2%" in page.locator("[data-usage=threshold] dt").inner_text()
    # The reserved output is to scale: its share of the bar is its share of the tokens.
    widths = page.locator(".bar .seg").evaluate_all(
        "segs => Object.fromEntries(segs.map(s => [s.dataset.part, s.offsetWidth]))"
    )
    usage = api(server, f"/sessions/{session_id}/context", dry_run="true")["usage"]
    share = usage["reserved_output_tokens"] / (usage["budget"] + usage["reserved_output_tokens"])
    assert abs(widths["reserved"] / sum(widths.values()) - share) < 0.02
    # A budget below the system prompt keeps the view, says why, and shows the default.
    page.get_by_label("Budget in tokens").fill("50")
    page.get_by_label("Budget in tokens").press("Enter")
    page.locator("#budget-fallback").wait_for()
    assert re.search(
        r"A budget of 50 tokens is below", page.locator("#budget-fallback").inner_text()
    )
    assert number(page.locator("[data-usage=budget] dd").inner_text()) == usage["budget"]
    assert page.locator("#session-title").inner_text() == session_id


def open_session_empty(page: Any, server: Server, session_id: str) -> None:
    """A session whose context holds no message yet: the view is there, the list empty."""
    sign_in(page, server, fragment=f"#/sessions/{session_id}")
    page.locator("#fold-note").wait_for()


def test_a_fold_by_an_external_model_is_not_run_but_offered(
    browser: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """With an LLM summarizer the view never calls the model: it says the fold is due, shows
    the context from before it, and offers to fold now."""
    workdir = tmp_path_factory.mktemp("llm")
    llm = Server(
        f"sqlite:///{workdir / 'foldwise.db'}",
        workdir,
        FOLDWISE_API_KEYS=f"alpha:{KEY_A}",
        ANTHROPIC_API_KEY="sk-ant-never-used",
        ANTHROPIC_BASE_URL="http://127.0.0.1:9",  # nothing listens: a call would fail
    ).start()
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        with httpx.Client(
            base_url=llm.base_url, headers={"Authorization": f"Bearer {KEY_A}"}
        ) as alpha:
            seed_fold_due(alpha, "llm-fold")
        page = context.new_page()
        page.set_default_timeout(20_000)
        sign_in(page, llm, fragment="#/sessions/llm-fold")
        note = page.locator("#fold-note")
        note.wait_for()
        assert note.get_attribute("data-fold") == "skipped"
        assert "with the llm summarizer, which this view does not call" in note.inner_text()
        assert page.locator("#summary").count() == 0  # no summary was made
        assert "dropped" in statuses(page).values()  # the fitted context, before the fold
        page.get_by_role("button", name="Fold now to see it").click()
        page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
        assert api(llm, "/sessions/llm-fold/summaries")["summaries"] == []
    finally:
        context.close()
        llm.stop()
