"""The `foldwise` command: serve | migrate | count | summarize | demo, and the data lifecycle's
export | import | purge | copy (app/data_cli.py)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

from pydantic import ValidationError

from app import data_cli
from app.core.settings import Settings, get_settings

EXIT_USAGE = 2
MAX_PORT = 65535


def _fail(message: str) -> int:
    print(f"foldwise: {message}", file=sys.stderr)
    return EXIT_USAGE


class _Help(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default; a None default is described by the help text itself."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None:
            return action.help
        return super()._get_help_string(action)


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line, exit 2; every option's help shows its default."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Help)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _port(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= MAX_PORT:
        raise argparse.ArgumentTypeError(f"port must be a number from 1 to {MAX_PORT}: {text!r}")
    return int(text)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number ≥ 1: {text!r}")
    return int(text)


def _settings_error(exc: ValidationError) -> str:
    """The first invalid setting, named as its environment variable."""
    first = exc.errors()[0]
    field = str(first["loc"][0]) if first["loc"] else "settings"
    env = field if field.isupper() else f"FOLDWISE_{field.upper()}"  # aliases: ANTHROPIC_*
    return f"{env}: {first['msg']}"


def read_transcript(source: str) -> list[dict[str, Any]]:
    """Messages from FILE or '-' (stdin): a JSON array, an object with `messages`, or JSONL."""
    text = sys.stdin.read() if source == "-" else Path(source).read_text("utf-8")
    stripped = text.strip()
    if not stripped:
        return []
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError:
        data = [json.loads(line) for line in stripped.splitlines() if line.strip()]
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        data = data["messages"]
    if isinstance(data, dict) and "role" in data:  # JSONL holding a single message
        data = [data]
    if not isinstance(data, list) or not all(isinstance(m, dict) for m in data):
        raise ValueError("expected a JSON array of messages, an object with 'messages', or JSONL")
    return data


def cmd_migrate(settings: Settings) -> int:
    from app.core.db import upgrade_database

    upgrade_database(settings.database_url)
    print("database is at the latest schema revision")
    return 0


def cmd_serve(settings: Settings, host: str, port: int, workers: int) -> int:
    import uvicorn

    from app.core.db import upgrade_database
    from app.core.logging import configure_logging
    from app.core.security import KeyRing, is_loopback
    from app.main import create_app
    from app.summarizers.template import fold_instructions

    keyring = KeyRing.from_config(settings.api_keys.get_secret_value())
    if keyring.is_open and not is_loopback(host) and not settings.allow_open:
        return _fail(
            f"refusing to serve on {host} without API keys: set FOLDWISE_API_KEYS "
            "(tenant:key,...) or, to run open on purpose, FOLDWISE_ALLOW_OPEN=true"
        )
    # Checked before anything runs: a bad template refuses to start (TemplateError, one line),
    # also for --workers N, whose processes would each fail on it.
    fold_instructions(settings)
    configure_logging(settings.log_level, settings.log_format)
    upgrade_database(settings.database_url)
    options: dict[str, Any] = {
        "host": host,
        "port": port,
        "proxy_headers": True,
        "server_header": False,
        "log_level": settings.log_level,
        # uvicorn's loggers propagate to the root handler (one format); the access log is
        # written by the app (app/core/metrics.py), with the route template and the tenant.
        "log_config": None,
        "access_log": False,
        # Read deadlines for headers and body (app/core/server.py), idle keep-alive limit.
        "http": "app.core.server:TimedHttpToolsProtocol",
        "timeout_keep_alive": settings.keep_alive_s,
    }
    if workers > 1:
        uvicorn.run("app.cli:worker_app", factory=True, workers=workers, **options)
    else:
        uvicorn.run(create_app(settings), **options)
    return 0


def worker_app() -> Any:
    """The app of one `serve --workers N` process, which configures its own logging."""
    from app.core.logging import configure_logging
    from app.main import create_app

    settings = get_settings()
    configure_logging(settings.log_level, settings.log_format)
    return create_app(settings)


def cmd_count(settings: Settings, source: str, model_name: str | None) -> int:
    from app.engine.items import normalize_posted
    from app.tokens.counter import counter_for
    from app.tokens.registry import load_registry

    model = load_registry(settings).get(model_name or settings.default_model)
    counter = counter_for(model)
    posted = normalize_posted(read_transcript(source))
    total = sum(counter.count_message(p.message) for p in posted)
    print(total)
    return 0


def cmd_summarize(
    settings: Settings, source: str, *, as_json: bool, strategy: str, max_summary_tokens: int | None
) -> int:
    import asyncio

    from app.services.summarize_context import summarize_transcript

    result = asyncio.run(
        summarize_transcript(
            read_transcript(source),
            settings=settings,
            strategy=strategy,
            max_summary_tokens=max_summary_tokens or settings.max_summary_tokens,
        )
    )
    if as_json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        print(result.get("summary") or "")
    return 0


def cmd_demo(url: str, api_key: str | None, session_id: str) -> int:
    import httpx

    from app.inspector.demo import seed_demo

    try:
        seed_demo(url, api_key, session_id)
    except httpx.HTTPStatusError as exc:
        if exc.response.status_code == 401:
            return _fail(
                f"the server at {url} needs an API key: pass --key <key> or set "
                "FOLDWISE_DEMO_KEY (a key of FOLDWISE_API_KEYS)"
            )
        return _fail(f"could not seed the demo session at {url}: {exc}")
    except httpx.HTTPError as exc:
        return _fail(f"could not seed the demo session at {url}: {exc}")
    print(
        f"demo session {session_id!r} seeded: open {url.rstrip('/')}/inspect#/sessions/{session_id}"
    )
    return 0


def _transcript_command(commands: Any, name: str, what: str, route: str) -> argparse.ArgumentParser:
    """A command that prints `what` of a transcript file, as `route` does it."""
    parser: argparse.ArgumentParser = commands.add_parser(
        name,
        help=f"print {what} of a transcript",
        description=f"Print {what} of a transcript, as {route} it.",
    )
    parser.add_argument("file", help="JSON array, object with 'messages', or JSONL; '-' = stdin")
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="foldwise", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser(
        "serve",
        help="apply migrations, then serve HTTP",
        description="Apply migrations to FOLDWISE_DATABASE_URL, then serve the API. Settings "
        "come from FOLDWISE_* variables or .env (README.md, Configuration).",
    )
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on; a non-loopback one needs FOLDWISE_API_KEYS "
        "(or FOLDWISE_ALLOW_OPEN=true)",
    )
    serve.add_argument("--port", type=_port, default=8000, help="TCP port (1-65535)")
    serve.add_argument("--workers", type=_positive, default=1, help="uvicorn worker processes")

    commands.add_parser(
        "migrate",
        help="apply database migrations up to the latest revision",
        description="Apply the migrations to FOLDWISE_DATABASE_URL (serve does it too).",
    )

    count = _transcript_command(commands, "count", "the token count", "POST /count-tokens counts")
    count.add_argument(
        "--model",
        default=None,
        help="model whose tokenizer counts (default: FOLDWISE_DEFAULT_MODEL)",
    )

    summarize = _transcript_command(
        commands, "summarize", "a summary", "POST /summarize-context makes"
    )
    summarize.add_argument("--json", action="store_true", help="print the whole response")
    summarize.add_argument(
        "--strategy",
        choices=["auto", "rule", "llm", "hybrid"],
        default="auto",
        help="summarizer: auto is llm with ANTHROPIC_API_KEY set, else rule",
    )
    summarize.add_argument(
        "--max-summary-tokens",
        type=_positive,
        default=None,
        help="upper bound of the summary (default: FOLDWISE_MAX_SUMMARY_TOKENS)",
    )

    demo = commands.add_parser(
        "demo",
        help="seed a folded demo session on a running server (for the Inspector)",
        description="Seed a folded demo session on a running server, then open /inspect.",
    )
    demo.add_argument("--url", default="http://127.0.0.1:8000", help="the running server")
    demo.add_argument("--key", default=None, help="API key (default: $FOLDWISE_DEMO_KEY)")
    demo.add_argument("--id", default="demo-agent", help="session id (recreated if present)")
    data_cli.add_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    from app.core.errors import FoldwiseError
    from app.core.security import ApiKeyConfigError
    from app.core.startup import MigrationNeeded, explain
    from app.core.tracing import TracingUnavailable
    from app.summarizers.template import TemplateError
    from app.tokens.registry import ModelRegistryError

    args = build_parser().parse_args(argv)
    if args.command == "demo":
        return cmd_demo(args.url, args.key or os.environ.get("FOLDWISE_DEMO_KEY"), args.id)
    try:
        settings = get_settings()
    except ValidationError as exc:
        return _fail(_settings_error(exc))
    try:
        if args.command == "serve":
            return cmd_serve(settings, args.host, args.port, args.workers)
        if args.command == "migrate":
            return cmd_migrate(settings)
        if args.command == "count":
            return cmd_count(settings, args.file, args.model)
        if args.command in data_cli.COMMANDS:
            return data_cli.run(args, settings)
        return cmd_summarize(
            settings,
            args.file,
            as_json=args.json,
            strategy=args.strategy,
            max_summary_tokens=args.max_summary_tokens,
        )
    except FoldwiseError as exc:
        return _fail(f"{exc.code}: {exc.message}")
    except Exception as exc:
        reason = explain(exc, settings.database_url)
        if reason is not None:
            return _fail(reason)
        known = (
            OSError, ValueError, ApiKeyConfigError, ModelRegistryError, TracingUnavailable,
            MigrationNeeded, TemplateError,
        )  # fmt: skip
        if isinstance(exc, known):
            return _fail(str(exc))
        raise


if __name__ == "__main__":
    sys.exit(main())
