"""Gemini tools: a tool holding `functionDeclarations`, or a tool Gemini runs itself
(`{"googleSearch": {}}`); what the other formats make of them and what Gemini makes of
theirs (render.py's `render_tools`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# Tools only Gemini runs ({"googleSearch": {}} and the like), kept as posted; and the key of
# Gemini's own function declarations, merged into one tool.
DECLARATIONS = "functionDeclarations"
GEMINI_TOOL_KEYS = frozenset(
    {
        DECLARATIONS,
        "googleSearch",
        "googleSearchRetrieval",
        "codeExecution",
        "urlContext",
        "retrieval",
        "fileSearch",
        "googleMaps",
        "computerUse",
        "enterpriseWebSearch",
        "function_declarations",
        "google_search",
        "google_search_retrieval",
        "code_execution",
        "url_context",
        "file_search",
        "google_maps",
        "computer_use",
    }
)
DECLARATION_KEYS = frozenset({DECLARATIONS, "function_declarations"})


def is_gemini_tool(tool: Mapping[str, Any]) -> bool:
    return "type" not in tool and any(key in tool for key in GEMINI_TOOL_KEYS)


def declarations(tool: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The function declarations of a Gemini tool (none for a tool Gemini runs itself)."""
    found = tool.get(DECLARATIONS, tool.get("function_declarations"))
    return [d for d in found if isinstance(d, Mapping)] if isinstance(found, list) else []


def declaration_schema(declaration: Mapping[str, Any]) -> dict[str, Any]:
    """A declaration's parameters as JSON Schema (Gemini's `parameters` may spell types in
    capitals: "OBJECT")."""
    schema = declaration.get("parametersJsonSchema", declaration.get("parameters_json_schema"))
    if isinstance(schema, dict):
        return schema
    schema = declaration.get("parameters")
    return _lower_types(schema) if isinstance(schema, dict) else {"type": "object"}


def _lower_types(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_lower_types(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _lower_types(v) for k, v in schema.items()}
    if isinstance(out.get("type"), str):
        out["type"] = out["type"].lower()
    return out


def gemini_tools(
    specs: Sequence[Mapping[str, Any] | None], tools: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Gemini tools: every function (`specs`: render.py's name / description / parameters of
    each tool, None for a server tool) as one tool's declarations, then Gemini's own server
    tools as posted. Another provider's server tool has no Gemini form: left out."""
    found: list[dict[str, Any]] = []
    server: list[dict[str, Any]] = []
    for spec, tool in zip(specs, tools, strict=True):
        if is_gemini_tool(tool):
            found += [dict(d) for d in declarations(tool)]
            rest = {
                k: v for k, v in tool.items() if k not in (DECLARATIONS, "function_declarations")
            }
            server += [rest] if rest else []
        elif spec is not None:
            declaration = {"name": spec["name"], "description": spec["description"]}
            found.append({**declaration, "parametersJsonSchema": spec["parameters"]})
    return ([{DECLARATIONS: found}] if found else []) + server
