"""The `foldwise` command: serve | migrate | count | summarize | demo, and the data lifecycle's
export | import | purge | copy (app/data_cli.py)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app import data_cli
from app.core.settings import Settings, get_settings

EXIT_USAGE = 2


def _fail(message: str) -> int:
    print(f"foldwise: {message}", file=sys.stderr)
    return EXIT_USAGE


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

    keyring = KeyRing.from_config(settings.api_keys.get_secret_value())
    if keyring.is_open and not is_loopback(host) and not settings.allow_open:
        return _fail(
            f"refusing to serve on {host} without API keys: set FOLDWISE_API_KEYS "
            "(tenant:key,...) or, to run open on purpose, FOLDWISE_ALLOW_OPEN=true"
        )
    configure_logging(settings.log_level)
    upgrade_database(settings.database_url)
    options: dict[str, Any] = {
        "host": host,
        "port": port,
        "proxy_headers": True,
        "server_header": False,
        "log_level": settings.log_level.lower(),
        # Off by default: one log line per request costs a third of the throughput of a
        # cheap route (measured in bench/); /metrics counts every request anyway.
        "access_log": settings.access_log,
        # Read deadlines for headers and body (app/core/server.py), idle keep-alive limit.
        "http": "app.core.server:TimedHttpToolsProtocol",
        "timeout_keep_alive": settings.keep_alive_s,
    }
    if workers > 1:
        uvicorn.run("app.main:create_app", factory=True, workers=workers, **options)
    else:
        uvicorn.run(create_app(settings), **options)
    return 0


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
    except httpx.HTTPError as exc:
        return _fail(f"could not seed the demo session at {url}: {exc}")
    print(
        f"demo session {session_id!r} seeded: open {url.rstrip('/')}/inspect#/sessions/{session_id}"
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="foldwise", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="apply migrations, then serve HTTP")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1, help="uvicorn worker processes")

    commands.add_parser("migrate", help="apply database migrations up to the latest revision")

    count = commands.add_parser("count", help="print the token count of a transcript")
    count.add_argument("file", help="JSON array, object with 'messages', or JSONL; '-' = stdin")
    count.add_argument("--model", default=None)

    summarize = commands.add_parser("summarize", help="print a summary of a transcript")
    summarize.add_argument("file", help="JSON array, object with 'messages', or JSONL; '-' = stdin")
    summarize.add_argument("--json", action="store_true", help="print the whole response")
    summarize.add_argument("--strategy", choices=["auto", "rule", "llm", "hybrid"], default="auto")
    summarize.add_argument("--max-summary-tokens", type=int, default=None)

    demo = commands.add_parser(
        "demo", help="seed a folded demo session on a running server (for the Inspector)"
    )
    demo.add_argument("--url", default="http://127.0.0.1:8000")
    demo.add_argument("--key", default=None, help="API key (default: $FOLDWISE_DEMO_KEY)")
    demo.add_argument("--id", default="demo-agent", help="session id (recreated if present)")
    data_cli.add_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    from app.core.errors import FoldwiseError
    from app.core.security import ApiKeyConfigError

    args = build_parser().parse_args(argv)
    if args.command == "demo":
        import os

        return cmd_demo(args.url, args.key or os.environ.get("FOLDWISE_DEMO_KEY"), args.id)
    try:
        settings = get_settings()
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
    except (OSError, ValueError, ApiKeyConfigError) as exc:
        return _fail(str(exc))


if __name__ == "__main__":
    sys.exit(main())
