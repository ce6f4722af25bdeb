"""Message content as stored and sent: a string, or a list of provider blocks (text, images,
tool calls and results). Token counting (app/tokens) and the engine both read it."""

from __future__ import annotations

from typing import Any

Block = dict[str, Any]
Content = str | list[Block]
