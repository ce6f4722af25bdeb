"""Linear scans for what a backtracking regex would do in quadratic time.

`<tag>.*?</tag>` rescans to the end of the text from every opening tag that is never
closed, and `\\n\\s*PHRASE` rescans a run of blank lines from each of its newlines: n
openings or n newlines cost n² steps inside one C call that holds the GIL. These helpers
find the same spans with each character read a bounded number of times.
"""

from __future__ import annotations

import re


def drop_blocks(text: str, opening: re.Pattern[str], closings: dict[str, re.Pattern[str]]) -> str:
    """`text` without each `opening` match (group 1 names the tag) through its closing tag.

    What `re.sub(r"<(tag)…>.*?</\\1>", "", text)` removes: blocks are taken left to right,
    an opening inside a removed block is part of it, and an opening never closed is kept.
    Each tag's closings are searched forward only, so the work is linear.
    """
    kept: list[str] = []
    start = 0  # where the text not yet copied begins
    found: dict[str, re.Match[str] | None] = {}  # each tag's next closing (None: no more)
    for match in opening.finditer(text):
        tag = match.group(1).lower()
        if match.start() < start or (tag in found and found[tag] is None):
            continue  # inside a removed block, or never closed from here on
        closing = found.get(tag)
        if closing is None or closing.start() < match.end():
            closing = found[tag] = closings[tag].search(text, match.end())
            if closing is None:
                continue
        kept.append(text[start : match.start()])
        start = closing.end()
    if not kept:
        return text
    kept.append(text[start:])
    return "".join(kept)


def cut_tail(text: str, phrase: re.Pattern[str]) -> str:
    """`text` cut at the line break before the first `phrase` that starts a line.

    What `re.sub(r"\\n\\s*PHRASE.*\\Z", "", text, flags=re.DOTALL)` does: the cut is at the
    first newline of the blank space before the phrase. The phrase must start with a
    non-space character, so the runs walked back over never overlap.
    """
    for match in phrase.finditer(text):
        blank = match.start()
        while blank > 0 and text[blank - 1].isspace():
            blank -= 1
        newline = text.find("\n", blank, match.start())
        if newline >= 0:
            return text[:newline]
    return text


def between(text: str, opening: str, closing: str) -> str | None:
    """The text between the first `opening` and the first `closing` after it, if both occur."""
    start = text.find(opening)
    if start < 0:
        return None
    end = text.find(closing, start + len(opening))
    return None if end < 0 else text[start + len(opening) : end]


# The rule summarizer reads at most this much of one text, its head and its tail: a request,
# an error line, an exit status or a tally sits near one end, and a summary quotes a few
# hundred characters of it. Every regex then runs over a bounded text, so none holds the GIL
# (and the event loop with it) for long, whatever a message's size.
READ_HEAD_CHARS = 32_768
READ_TAIL_CHARS = 32_768
ELIDED = "\n…\n"


# Redaction reads what `excerpt` keeps plus this margin on each side (`readable`): a secret
# an excerpt boundary cuts through is still whole where it is redacted (a PEM key is ~3k).
REDACT_MARGIN_CHARS = 16_384


def readable(text: str) -> str:
    """What the rule summarizer may read of `text`: all of it, or the head and tail that
    `excerpt` keeps with REDACT_MARGIN_CHARS more on each side (`excerpt` of it is `excerpt`
    of `text`). Redacting this instead of the whole text keeps one regex call over megabytes
    (which holds the GIL, and the event loop with it) out of a fold."""
    head, tail = READ_HEAD_CHARS + REDACT_MARGIN_CHARS, READ_TAIL_CHARS + REDACT_MARGIN_CHARS
    if len(text) <= head + tail:
        return text
    return text[:head] + ELIDED + text[-tail:]


def excerpt(text: str) -> str:
    """`text`, or its head and tail cut at line breaks when it is longer than both."""
    if len(text) <= READ_HEAD_CHARS + READ_TAIL_CHARS:
        return text
    head = text.rfind("\n", 0, READ_HEAD_CHARS)
    head = head if head > 0 else READ_HEAD_CHARS
    tail = text.find("\n", len(text) - READ_TAIL_CHARS)
    tail = tail if tail >= 0 else len(text) - READ_TAIL_CHARS
    return text[:head] + ELIDED + text[tail:].lstrip("\n")
