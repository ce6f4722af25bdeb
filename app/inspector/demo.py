"""A generated demo session for the Inspector: a coding agent fixing a failing test, with tool
calls, a long tool output, and one fold, so every part of the page has something to show."""

from __future__ import annotations

from typing import Any

import httpx

DEMO_ID = "demo-agent"
SYSTEM = "You are a careful coding agent. Run the tests before you claim a fix."
TOOLS: list[dict[str, Any]] = [
    {
        "name": "run",
        "description": "Run a shell command in the repository and return its output.",
        "input_schema": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    },
    {
        "name": "read_file",
        "description": "Read a file of the repository.",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    },
]
FILES = ["app/cart.py", "app/pricing.py", "app/tax.py", "tests/test_cart.py", "app/discounts.py"]


def _call(turn: int, tool: str, argument: dict[str, Any], note: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [
            {"type": "text", "text": note},
            {"type": "tool_use", "id": f"call_{turn}", "name": tool, "input": argument},
        ],
    }


def _result(turn: int, output: str) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": f"call_{turn}", "content": output}],
    }


def demo_messages(rounds: int = 8) -> list[dict[str, Any]]:
    """A deterministic transcript: the task, then read/run rounds, then a fix and a green run."""
    messages: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": "tests/test_cart.py::test_total_with_discount fails since the tax "
            "change. Find out why and fix it; keep the public API of app/cart.py unchanged.",
        }
    ]
    for turn in range(rounds):
        path = FILES[turn % len(FILES)]
        body = "\n".join(
            f"{n + 1:4d}  def helper_{turn}_{n}(value):  # keeps {path} readable"
            for n in range(60 if turn % 3 == 0 else 18)
        )
        messages.append(_call(2 * turn, "read_file", {"path": path}, f"Reading {path}."))
        messages.append(_result(2 * turn, body))
        failing = turn < rounds - 1
        output = (
            "FAILED tests/test_cart.py::test_total_with_discount - assert 107.0 == 106.93\n"
            "1 failed, 41 passed in 0.84s"
            if failing
            else "42 passed in 0.81s"
        )
        messages.append(
            _call(2 * turn + 1, "run", {"command": "pytest -q tests/test_cart.py"}, "Running it.")
        )
        messages.append(_result(2 * turn + 1, output))
        messages.append(
            {
                "role": "assistant",
                "content": (
                    f"Round {turn + 1}: the discount is applied after tax in {path}; "
                    "rounding happens twice."
                    if failing
                    else "All 42 tests pass now."
                ),
            }
        )
        if turn == rounds // 2:
            messages.append(
                {"role": "user", "content": "Don't touch app/tax.py, it is shared with billing."}
            )
    messages.append({"role": "user", "content": "Great. Summarise what you changed and why."})
    return messages


def seed_demo(base_url: str, api_key: str | None = None, session_id: str = DEMO_ID) -> str:
    """Create (or recreate) the demo session on a running Foldwise and fold it once."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    with httpx.Client(base_url=base_url, headers=headers, timeout=60) as client:
        client.delete(f"/sessions/{session_id}")
        created = client.post(
            "/sessions",
            json={
                "id": session_id,
                "model": "claude-sonnet-4-5",
                "system_prompt": SYSTEM,
                "tools": TOOLS,
                "metadata": {"demo": True},
            },
        )
        created.raise_for_status()
        messages = demo_messages()
        split = len(messages) * 2 // 3
        client.post(
            f"/sessions/{session_id}/messages", json={"messages": messages[:split]}
        ).raise_for_status()
        # A small budget: the first requests fold the older rounds into a summary.
        context = f"/sessions/{session_id}/context"
        client.get(context, params={"max_tokens": 1800}).raise_for_status()
        client.post(
            f"/sessions/{session_id}/messages", json={"messages": messages[split:]}
        ).raise_for_status()
        client.get(context, params={"max_tokens": 1800}).raise_for_status()
        client.get(context, params={"max_tokens": 1800}).raise_for_status()
    return session_id


__all__ = ["DEMO_ID", "demo_messages", "seed_demo"]
