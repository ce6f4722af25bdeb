"""Unknown query parameters are refused on every route (422 `unknown_query_parameter`).

A typo such as `max_token=2000` used to be ignored, so the request silently got the default;
and every `?x=1`, `?x=2`… was a distinct response cache entry. `reject_unknown_query`
is an app-wide dependency: it compares the request's query keys with the ones the matched
route declares (its own parameters, its dependencies' and the fields of a query model).
"""

from __future__ import annotations

from fastapi import Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from pydantic import BaseModel

from app.core.errors import UnknownQueryParameter

_KEYS_ATTRIBUTE = "_foldwise_query_keys"


def declared_query_keys(dependant: Dependant) -> frozenset[str]:
    """Every query key a route reads: its parameters and its dependencies', a query model
    (`Annotated[Model, Query()]`) standing for its fields."""
    keys: set[str] = set()
    pending = [dependant]
    while pending:
        current = pending.pop()
        pending.extend(current.dependencies)
        for field in current.query_params:
            model = field.field_info.annotation
            if isinstance(model, type) and issubclass(model, BaseModel):
                keys.update(info.alias or name for name, info in model.model_fields.items())
            else:
                keys.add(field.alias)
    return frozenset(keys)


def _route_keys(route: APIRoute) -> frozenset[str]:
    """Computed once per route, kept on the route (routes are not hashable)."""
    keys: frozenset[str] | None = getattr(route, _KEYS_ATTRIBUTE, None)
    if keys is None:
        keys = declared_query_keys(route.dependant)
        setattr(route, _KEYS_ATTRIBUTE, keys)
    return keys


async def reject_unknown_query(request: Request) -> None:
    """422 naming the query keys the matched route does not declare."""
    if not request.scope.get("query_string"):
        return
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    allowed = _route_keys(route)
    unknown = sorted(set(request.query_params) - allowed)
    if unknown:
        raise UnknownQueryParameter(
            f"unknown query parameter{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}",
            {"unknown": unknown, "allowed": sorted(allowed)},
        )
