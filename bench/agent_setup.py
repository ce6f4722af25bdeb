"""A coding agent's system prompt and tool definitions, written for the prompt-cache bench.

Real agents send a few thousand tokens of tools and instructions before the first message;
they change only with the agent itself, so a provider can cache them for the whole session.
The definitions are in the Anthropic shape (`name`, `description`, `input_schema`).
"""

from __future__ import annotations

from typing import Any

SYSTEM_PROMPT = """\
You are a software engineering agent working inside a checked-out Python repository on the \
user's machine. You act through the tools listed with this prompt; you cannot see the \
repository any other way, so look before you assume.

How to work:
- Start by restating the task in one sentence, then find the code it concerns: list the \
directories, search for the names the user mentioned, read the files that define them. Read \
a whole function before changing it, and read its callers before changing its signature.
- Keep changes small and in the style of the surrounding code: the same naming, the same \
error handling, the same level of comments. Do not reformat code you did not otherwise touch.
- After every change, run the narrowest test that covers it, then the module's test file. \
Before you report the task as done, run the whole suite once. A failing test you did not \
cause is reported, not silently fixed or skipped.
- When a command fails, read its output to the end before trying something else. Quote the \
line that matters in your next message. Never run the same failing command twice without a \
change in between.
- Prefer editing an existing file to creating a new one. Never create documentation files \
unless the user asks for them. Never commit, push, or change git history unless asked.
- Secrets: never print environment variables, keys or tokens, and never write them to a file. \
If a test needs a credential, stop and ask.
- Destructive commands (deleting files outside the build directory, dropping databases, \
resetting branches) need the user's explicit approval in this conversation.

How to answer:
- Explain each step in one sentence before the tool call that does it. Keep prose short; \
code and command output speak for themselves.
- When the task is done, summarise what changed (files and why), how it was tested, and \
anything left open. When you are blocked, say exactly what you need from the user.
- If the request is ambiguous, pick the most likely reading, say which one you picked, and \
go on; ask only when a wrong guess would be expensive to undo.

Repository conventions: tests live under tests/ and mirror the package layout; the project \
uses pytest, ruff for linting and formatting, and mypy in strict mode. Type hints are \
required on every new function. Line length is 100.
"""


def _schema(required: list[str], **properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _integer(description: str, minimum: int = 0) -> dict[str, Any]:
    return {"type": "integer", "minimum": minimum, "description": description}


def _boolean(description: str) -> dict[str, Any]:
    return {"type": "boolean", "description": description}


def _tool(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "description": description, "input_schema": schema}


PATH = _string("Path relative to the repository root, e.g. `src/app/models.py`.")

TOOLS: list[dict[str, Any]] = [
    _tool(
        "read_file",
        "Read a text file of the repository and return its lines, each prefixed with its "
        "line number. Long files are returned in windows: pass `offset` and `limit` to read "
        "the next part. Binary files are refused. Use this before editing any file; edits "
        "to a file you have not read in this session are rejected.",
        _schema(
            ["path"],
            path=PATH,
            offset=_integer("First line to return, 1-based. Defaults to 1.", 1),
            limit=_integer("How many lines to return at most. Defaults to 400.", 1),
        ),
    ),
    _tool(
        "write_file",
        "Create a file, or replace the whole content of an existing one. Parent directories "
        "are created as needed. Prefer `edit_file` for changes to an existing file: it sends "
        "less text and cannot lose content by accident. The file is written as UTF-8 with "
        "a trailing newline.",
        _schema(
            ["path", "content"],
            path=PATH,
            content=_string("The complete new content of the file."),
        ),
    ),
    _tool(
        "edit_file",
        "Replace one exact piece of text in a file. `old_text` must occur exactly once in "
        "the file (include enough surrounding lines to make it unique), unless `replace_all` "
        "is true. Whitespace and indentation must match the file byte for byte. Returns the "
        "changed region with line numbers, so you can check the result without reading the "
        "file again.",
        _schema(
            ["path", "old_text", "new_text"],
            path=PATH,
            old_text=_string("The text to replace, copied from the file."),
            new_text=_string("The text to put in its place; may be empty to delete."),
            replace_all=_boolean("Replace every occurrence instead of exactly one."),
        ),
    ),
    _tool(
        "move_path",
        "Move or rename a file or directory inside the repository. Fails when the target "
        "exists unless `overwrite` is true. Imports that refer to the old module path are "
        "not updated: search for them afterwards.",
        _schema(
            ["source", "target"],
            source=PATH,
            target=_string("The new path, relative to the repository root."),
            overwrite=_boolean("Replace an existing target."),
        ),
    ),
    _tool(
        "delete_path",
        "Delete a file, or a directory with everything in it when `recursive` is true. "
        "Deleting anything outside the build and cache directories needs the user's "
        "approval first (see `ask_user`).",
        _schema(["path"], path=PATH, recursive=_boolean("Delete a directory and its content.")),
    ),
    _tool(
        "list_directory",
        "List the entries of a directory: files with their size in bytes, subdirectories "
        "with a trailing slash. Entries ignored by the repository's .gitignore are left out "
        "unless `include_ignored` is true. With `depth` above 1, subdirectories are listed "
        "recursively as an indented tree.",
        _schema(
            ["path"],
            path=_string("Directory relative to the repository root; `.` for the root."),
            depth=_integer("How many levels to descend. Defaults to 1.", 1),
            include_ignored=_boolean("Also list files the .gitignore excludes."),
        ),
    ),
    _tool(
        "find_files",
        "Find files whose path matches a glob pattern such as `**/*.py` or "
        "`tests/**/test_*.py`, newest first. Returns at most 200 paths; narrow the pattern "
        "when the result says it was cut.",
        _schema(
            ["pattern"],
            pattern=_string("Glob pattern, relative to the repository root."),
            path=_string("Directory to search in instead of the root."),
        ),
    ),
    _tool(
        "search_text",
        "Search file contents with a regular expression (Rust regex syntax) and return the "
        "matching lines with their paths and line numbers. Use `context` to see lines "
        "around each match. Searches respect .gitignore. Use this to find definitions, "
        "callers and usages before changing a name.",
        _schema(
            ["pattern"],
            pattern=_string("Regular expression to look for."),
            path=_string("File or directory to search in; the whole repository by default."),
            glob=_string("Only search files whose path matches this glob, e.g. `*.py`."),
            case_sensitive=_boolean("Match case exactly. Defaults to true."),
            context=_integer("Lines to show before and after each match. Defaults to 0."),
            max_results=_integer("Stop after this many matching lines. Defaults to 100.", 1),
        ),
    ),
    _tool(
        "run_command",
        "Run a shell command in the repository root with bash and return its exit status, "
        "standard output and standard error (each cut to its last 30,000 characters). The "
        "command runs without a terminal and without network access. Long-running servers "
        "must be started with `background` and stopped with `stop_command`. Do not use this "
        "to read or search files: the dedicated tools are faster and their output is "
        "easier to read.",
        _schema(
            ["command"],
            command=_string("The command line, e.g. `python -m pip list`."),
            timeout_seconds=_integer("Kill the command after this long. Defaults to 120.", 1),
            background=_boolean("Start it and return at once with a handle to stop it."),
            working_directory=_string("Directory to run in, relative to the repository root."),
        ),
    ),
    _tool(
        "stop_command",
        "Stop a command started with `background` and return everything it printed.",
        _schema(["handle"], handle=_string("The handle `run_command` returned.")),
    ),
    _tool(
        "run_tests",
        "Run the project's tests with pytest and return a summary: counts of passed, failed "
        "and skipped tests, and for each failure its test id, the assertion message and the "
        "last frames of its traceback. Select tests by path, node id or keyword expression. "
        "Prefer this over `run_command` for tests: the output is shorter and structured.",
        _schema(
            [],
            targets=_string("Paths or node ids, space separated; the whole suite if empty."),
            keyword=_string("A pytest `-k` expression to select tests by name."),
            fail_fast=_boolean("Stop at the first failure."),
            verbose=_boolean("List every test with its outcome, not only failures."),
        ),
    ),
    _tool(
        "git_status",
        "Show the working tree status: the current branch, files staged, modified and "
        "untracked, relative to the last commit. Read-only.",
        _schema([]),
    ),
    _tool(
        "git_diff",
        "Show the changes of the working tree as a unified diff, against the last commit or "
        "against `base`. Use it before reporting a task as done to review every change you "
        "made. Read-only.",
        _schema(
            [],
            path=_string("Limit the diff to this file or directory."),
            base=_string("Commit or branch to compare against; the last commit by default."),
            staged=_boolean("Show only staged changes."),
        ),
    ),
    _tool(
        "find_symbol",
        "Find where a Python name is defined and where it is used, by parsing the "
        "repository's modules: classes, functions, methods, module-level constants. Returns "
        "the definition with its signature and docstring, then up to 50 references with "
        "their enclosing function. More precise than a text search for common names.",
        _schema(
            ["name"],
            name=_string("A name, or a dotted path such as `app.models.User.save`."),
            include_tests=_boolean("Also report references inside tests/."),
        ),
    ),
    _tool(
        "update_plan",
        "Record the plan for the task as a short checklist and mark progress on it. The "
        "user sees the list next to the conversation. Keep one item in progress at a time, "
        "mark an item done as soon as it is, and add items you discover along the way. "
        "Send the whole list each time.",
        _schema(
            ["items"],
            items={
                "type": "array",
                "description": "The whole checklist, in order.",
                "items": _schema(
                    ["text", "status"],
                    text=_string("What the step does, in a few words."),
                    status={
                        "type": "string",
                        "enum": ["pending", "in_progress", "done"],
                        "description": "Where the step stands.",
                    },
                ),
            },
        ),
    ),
    _tool(
        "ask_user",
        "Ask the user a question and wait for the answer. Use it only when a wrong guess "
        "would be expensive to undo: a destructive command, a credential, or two readings "
        "of the task that lead to different designs. Offer the choices you see.",
        _schema(
            ["question"],
            question=_string("The question, in one or two sentences."),
            choices={
                "type": "array",
                "items": {"type": "string"},
                "description": "Suggested answers, most likely first.",
            },
        ),
    ),
]
