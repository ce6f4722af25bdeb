"""A Claude user with the Messages API's server-side compaction: the official `anthropic`
SDK against a fake Messages API on loopback that answers with a `compaction` block. What the
SDK returns is posted as it is; from then on Foldwise sends the message holding the block and
what follows, nothing before it (the API would ignore it, and bill it)."""

from __future__ import annotations

import json

import anthropic
from foldwise_client import Foldwise

from tests.pyclient.conftest import new_id
from tests.pyclient.fake_providers import FakeProviders
from tests.support.official_types import assert_official_anthropic
from tests.support.servers import Server


def test_a_claude_conversation_compacted_by_the_provider(
    server: Server, providers: FakeProviders
) -> None:
    fw = Foldwise(server.base_url)
    session_id = new_id("claude")
    fw.create_session(session_id, model="claude-sonnet-4-6", system_prompt="Be brief.")
    claude = anthropic.Anthropic(api_key="test-key", base_url=providers.base_url)
    for turn in range(5):
        text = f"note {turn}" + (": compact now" if turn == 2 else "")
        fw.append_messages(session_id, [{"role": "user", "content": text}])
        kwargs = fw.context(session_id, format="anthropic").anthropic_kwargs()
        assert_official_anthropic(kwargs["messages"])
        reply = claude.beta.messages.create(
            **kwargs,
            betas=["compact-2026-01-12"],
            context_management={"edits": [{"type": "compact_20260112"}]},
        )
        blocks = [block.model_dump(mode="json", exclude_none=True) for block in reply.content]
        fw.append_messages(session_id, [{"role": "assistant", "content": blocks}])

    sent = providers.requests["messages"][-1]["messages"]
    text = json.dumps(sent)
    assert "note 0" not in text and "note 1" not in text  # before the compaction: not sent
    assert "note 3" in text and "note 4" in text
    held = next(m for m in sent if isinstance(m["content"], list) and m["content"])
    assert held["role"] == "assistant" and held["content"][0]["type"] == "compaction"
    assert held["content"][0]["content"].startswith("Summary of 5 messages")
    context = fw.context(session_id, format="anthropic", explain=True)
    statuses = [e["status"] for e in context.explain or [] if e["status"] != "synthetic"]
    assert statuses[:5] == ["compacted"] * 5 and set(statuses[5:]) == {"included"}
    # Another format reads the block's summary as a note and leaves the same messages out.
    chat = json.dumps(fw.context(session_id, format="openai").messages)
    assert "Summary of 5 messages" in chat and "note 0" not in chat
