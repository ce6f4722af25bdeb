"""The Python examples of the README, run as a user runs them (a subprocess per turn) against a
real server, with the providers' SDKs pointed at fake provider APIs on loopback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from foldwise_client import Foldwise

from tests.pyclient.conftest import new_id
from tests.pyclient.fake_providers import FakeProviders
from tests.support.servers import ROOT, Server, free_port

EXAMPLES = ROOT / "examples"
OWN_ENV = ("FOLDWISE_", "OPENAI_", "ANTHROPIC_")


def run_example(
    name: str, server: Server, providers: FakeProviders, *args: str, provider_url: str = ""
) -> str:
    """The example's output; it must succeed. `provider_url`: the Anthropic API it calls
    instead of the fake (an address nothing listens on: the provider down)."""
    done = started(name, server, providers, args, provider_url)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def started(
    name: str, server: Server, providers: FakeProviders, args: tuple[str, ...], provider_url: str
) -> subprocess.CompletedProcess[str]:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(OWN_ENV)},
        "FOLDWISE_BASE_URL": server.base_url,
        "ANTHROPIC_BASE_URL": provider_url or providers.base_url,
        "ANTHROPIC_API_KEY": "test-key",
        "OPENAI_BASE_URL": providers.base_url + "/v1",
        "OPENAI_API_KEY": "test-key",
        "OPENAI_AGENTS_DISABLE_TRACING": "1",
    }
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_anthropic_chat(server: Server, providers: FakeProviders) -> None:
    sid = new_id("ex-anthropic")
    first = run_example("anthropic_chat.py", server, providers, "My name is Ada.", sid)
    assert first == "Noted: My name is Ada."
    second = run_example("anthropic_chat.py", server, providers, "What is my name?", sid)
    assert second == "Noted: What is my name?"
    sent = providers.requests["messages"][-1]
    assert sent["model"] == "claude-sonnet-4-6" and sent["max_tokens"] == 4096
    assert "You are a concise assistant." in str(sent["system"])
    assert "My name is Ada." in str(sent["messages"][0]), "the first turn came from Foldwise"
    assert len(sent["messages"]) == 3
    assert Foldwise(server.base_url).get_session(sid)["message_count"] == 4


def test_anthropic_chat_retried_after_a_provider_failure_stores_the_turn_once(
    server: Server, providers: FakeProviders
) -> None:
    sid = new_id("ex-retry")
    down = f"http://127.0.0.1:{free_port()}"
    args = ("My name is Ada.", sid, "turn-1")
    failed = started("anthropic_chat.py", server, providers, args, provider_url=down)
    assert failed.returncode != 0, "the provider was down"
    assert Foldwise(server.base_url).get_session(sid)["message_count"] == 1, "the question"
    assert run_example("anthropic_chat.py", server, providers, *args) == "Noted: My name is Ada."
    stored = list(Foldwise(server.base_url).iter_messages(sid))
    assert [(m["role"], m["client_id"]) for m in stored] == [
        ("user", "turn-1:user"),
        ("assistant", "turn-1:assistant"),
    ], "the retry stored the question once"


def test_openai_agents_session(server: Server, providers: FakeProviders) -> None:
    sid = new_id("ex-agents")
    out = run_example("openai_agents_session.py", server, providers, "Weather in Paris?", sid)
    assert out == "The tool says: sunny in Paris"
    out = run_example("openai_agents_session.py", server, providers, "Thanks!", sid)
    assert out == "Noted: Thanks!"
    sent = providers.requests["responses"][-1]
    assert sent["model"] == "gpt-4o-mini"
    assert "Weather in Paris?" in str(sent["input"][0]), "history from the Foldwise session"
    kinds = [item.get("type") for item in sent["input"]]
    assert kinds[1:3] == ["function_call", "function_call_output"]
    stored = list(Foldwise(server.base_url).iter_messages(sid))
    roles = ["user", "assistant", "tool", "assistant", "user", "assistant"]
    assert [m["role"] for m in stored] == roles


def test_langgraph_agent(server: Server, providers: FakeProviders) -> None:
    sid = new_id("ex-graph")
    out = run_example("langgraph_agent.py", server, providers, "Weather in Paris?", sid)
    assert out == "The tool says: sunny in Paris"
    out = run_example("langgraph_agent.py", server, providers, "Thanks!", sid)
    assert out == "Noted: Thanks!"
    sent = providers.requests["chat"][-1]
    assert sent["model"] == "gpt-4o-mini"
    roles = [m["role"] for m in sent["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent["messages"][0]["content"] == "You are a concise assistant."
    assert len(list(Foldwise(server.base_url).iter_messages(sid))) == 6, "stored once each"


@pytest.mark.parametrize(
    "name", ["anthropic_chat.py", "openai_agents_session.py", "langgraph_agent.py"]
)
def test_the_readme_shows_each_example_whole(name: str) -> None:
    source = (EXAMPLES / name).read_text()
    code = source.split('"""\n\n', 1)[1]  # without the module docstring
    readme = (ROOT / "README.md").read_text()
    assert f"```python\n{code}```" in readme
