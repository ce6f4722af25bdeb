"""What a tool call did, read from its name and arguments, and what its result says.

Known tools (read_file, write_file, edit_file, str_replace_editor, apply_patch, bash, …) are
recognised by name; any other tool is classified from the verbs in its name
(`get_user_file` → read, `update_config` → modified) and its path-like arguments.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.summarizers.rule.paths import is_path_like
from app.summarizers.rule.scan import READ_HEAD_CHARS
from app.summarizers.rule.shell import FileStatus, shell_files

COMMAND_WORDS = {"bash", "shell", "sh", "zsh", "terminal", "exec", "execute", "run", "command"}
COMMAND_ARGS = ("command", "cmd", "script", "commands")
READ_VERBS = {"read", "get", "list", "search", "find", "grep", "glob", "view", "open", "fetch"}
READ_VERBS |= {"show", "cat", "ls", "load", "inspect", "lookup", "head", "tail"}
CREATE_VERBS = {"create", "new", "add", "save", "touch", "put", "mkdir"}
WRITE_VERBS = {"write"}
MODIFY_VERBS = {"edit", "update", "modify", "patch", "replace", "delete", "remove", "rename"}
MODIFY_VERBS |= {"move", "append", "insert", "str", "multiedit", "rm", "apply"}
SEARCH_WORDS = {"grep", "glob", "search", "find"}
_HAS_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,8}$")
_LINE_BREAK = re.compile(r"[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")  # str.splitlines()
PATH_KEYS: tuple[str, ...] = ("path", "file_path", "filepath", "file", "filename", "target_file")
PATH_KEYS += ("notebook_path", "target", "dest", "destination", "source", "src", "new_path")
PATH_LIST_KEYS = ("paths", "files", "file_paths")
EDITOR_COMMANDS = {
    "view": "read",
    "create": "created",
    "str_replace": "modified",
    "insert": "modified",
    "undo_edit": "modified",
}

# Code-execution tools (OpenHands' `run_ipython`, SWE-agent-style tool libraries) edit files by
# calling helpers from the code: `edit_file_by_replace("a.py", …)`, `create_file(path="b.py")`.
CODE_ARGS = ("code", "source", "python", "script")
_HELPER_CALL = re.compile(r"\b([A-Za-z_]\w*)\(\s*(?:\w+\s*=\s*)?[rb]?(['\"])([^'\"\n]+)\2")
HELPER_NOUNS = {"file", "content", "lines", "line"}
_PATCH_FILE = re.compile(r"^\*\*\* (Update|Add|Delete) File: (.+)$", re.MULTILINE)
_DIFF_TARGET = re.compile(r"^\+\+\+ (?:b/)?(\S+)", re.MULTILINE)
_DIFF_NEW = re.compile(r"^--- /dev/null\n\+\+\+ (?:b/)?(\S+)", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class ToolUse:
    """One tool call: `files` it touched and the shell `command` it ran, if any."""

    call_id: str
    name: str
    args: Mapping[str, Any]
    files: tuple[tuple[str, FileStatus], ...]
    command: str | None

    @property
    def label(self) -> str:
        """How errors of this call are attributed: the command, or the tool and its first file."""
        if self.command:
            return self.command
        if self.files:
            return f"{self.name} {self.files[0][0]}"
        return self.name


def parse_arguments(raw: Any) -> dict[str, Any]:
    """OpenAI sends arguments as a JSON string, Anthropic as an object; tolerate both and junk."""
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return {"input": raw}
        return dict(value) if isinstance(value, Mapping) else {"input": raw}
    return {}


def name_words(name: str) -> list[str]:
    """`editFile` / `edit_file` / `fs.edit-file` → ["edit", "file"]."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def one_line(text: str, limit: int = 200) -> str:
    """A command as one line: first line, with a marker when more was cut."""
    text = text.strip()
    # The first line only: splitting all of a long command into lines was work for nothing.
    end = _LINE_BREAK.search(text)
    first = (text[: end.start()] if end else text).strip()
    cut = end is not None or len(first) > limit
    return (first[:limit] + " …") if cut else first


def classify_call(call_id: str, name: str, raw_args: Any) -> ToolUse:
    args = parse_arguments(raw_args)
    words = set(name_words(name))
    command = _command_text(args, words)
    if "editor" in words or ("str" in words and "replace" in words and "command" in args):
        status = EDITOR_COMMANDS.get(str(args.get("command", "")), "modified")
        return ToolUse(call_id, name, args, _pairs(_arg_paths(args), status), None)
    if "patch" in words or "apply" in words:
        patch = next((v for k, v in args.items() if isinstance(v, str) and "\n" in v), "")
        files = _patch_files(patch) or _pairs(_arg_paths(args), "modified")
        return ToolUse(call_id, name, args, files, None)
    helpers = _helper_files(args)
    if command is not None:
        # The files a command touches are named in its head (a heredoc body is data).
        files = tuple(dict.fromkeys((*shell_files(command[:READ_HEAD_CHARS]), *helpers)))
        return ToolUse(call_id, name, args, files, one_line(command))
    if helpers:
        return ToolUse(call_id, name, args, helpers, None)
    paths = _arg_paths(args)
    if words & SEARCH_WORDS:  # a search's path is where it looked, not a file it read
        paths = [p for p in paths if _HAS_EXTENSION.search(p)]
    return ToolUse(call_id, name, args, _pairs(paths, _status_from_verbs(words)), None)


def _command_text(args: Mapping[str, Any], words: set[str]) -> str | None:
    for key in COMMAND_ARGS:
        value = args.get(key)
        if isinstance(value, list):
            value = " && ".join(str(v) for v in value)
        if isinstance(value, str) and value.strip() and value not in EDITOR_COMMANDS:
            return value
    if words & COMMAND_WORDS and isinstance(args.get("input"), str):
        return str(args["input"])
    return None


def _helper_files(args: Mapping[str, Any]) -> tuple[tuple[str, FileStatus], ...]:
    """Files that editing helpers called from a code argument touch: a helper is a function
    whose name pairs a file noun with a verb (`append_file`, `insert_content_at_line`), and its
    file is its first argument when that is a path; search helpers (`search_file`) name none."""
    found: dict[str, FileStatus] = {}
    for key in CODE_ARGS:
        code = args.get(key)
        if not isinstance(code, str):
            continue
        for match in _HELPER_CALL.finditer(code):
            words = set(name_words(match.group(1)))
            path = match.group(3).strip()
            if not words & HELPER_NOUNS or words & SEARCH_WORDS or not is_path_like(path):
                continue
            status = _status_from_verbs(words)
            old = found.get(path)
            # A file created and then edited in the same code is new; reads never demote.
            if old is None or (old == "read" and status != "read"):
                found[path] = status
    return tuple(found.items())


def _status_from_verbs(words: set[str]) -> FileStatus:
    if words & MODIFY_VERBS:
        return "modified"
    if words & CREATE_VERBS:
        return "created"
    if words & WRITE_VERBS:
        return "written"
    return "read"


def _arg_paths(args: Mapping[str, Any]) -> list[str]:
    paths = [str(args[k]) for k in PATH_KEYS if isinstance(args.get(k), str) and args[k]]
    for key in PATH_LIST_KEYS:
        value = args.get(key)
        if isinstance(value, list):
            paths += [str(v) for v in value if isinstance(v, str)]
    if not paths:  # unknown argument names: any string value that looks like a path
        paths = [v for v in args.values() if isinstance(v, str) and is_path_like(v)]
    return list(dict.fromkeys(paths))


def _pairs(paths: list[str], status: FileStatus) -> tuple[tuple[str, FileStatus], ...]:
    return tuple((p, status) for p in paths)


def _patch_files(patch: str) -> tuple[tuple[str, FileStatus], ...]:
    kinds = {"Update": "modified", "Add": "created", "Delete": "modified"}
    found = [(m.group(2).strip(), kinds[m.group(1)]) for m in _PATCH_FILE.finditer(patch)]
    created = set(_DIFF_NEW.findall(patch))
    found += [(p, "created" if p in created else "modified") for p in _DIFF_TARGET.findall(patch)]
    return tuple(dict.fromkeys(found))
