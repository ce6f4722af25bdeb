"""Session routes: create, list, read, update, delete."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response

from app.api.deps import SessionId, service
from app.schemas.common import BODY_ERRORS, ERROR_RESPONSES
from app.schemas.sessions import (
    SessionCreate,
    SessionPage,
    SessionRead,
    SessionsDeleted,
    SessionSort,
    SessionUpdate,
    SortOrder,
)
from app.services.sessions import SessionService

router = APIRouter(prefix="/sessions", tags=["sessions"], responses=ERROR_RESPONSES)


# The start of a session id (SESSION_ID_PATTERN), or nothing.
ID_PREFIX = r"^([A-Za-z0-9][A-Za-z0-9._:@-]{0,255})?$"

Sessions = Annotated[SessionService, Depends(service(SessionService))]
SessionReader = Annotated[SessionService, Depends(service(SessionService, read_only=True))]


@router.post("", status_code=201, responses=BODY_ERRORS)
async def create_session(body: SessionCreate, sessions: Sessions) -> SessionRead:
    """Create a session; 409 `session_exists` when this tenant already has the id."""
    return await sessions.create(body)


@router.get("")
async def list_sessions(
    sessions: SessionReader,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: str | None = None,
    sort: Annotated[
        SessionSort | None,
        Query(description="Default: creation order. Ties are broken by creation order."),
    ] = None,
    order: SortOrder = SortOrder.asc,
    id_prefix: Annotated[
        str | None,
        Query(pattern=ID_PREFIX, description="Only ids starting with this (case-sensitive)."),
    ] = None,
) -> SessionPage:
    """Sessions in creation order (oldest first), or by `sort` in `order`; pass
    `next_cursor` back as `cursor` with the same `sort`, `order` and `id_prefix` (another
    listing's cursor is 422 `cursor_mismatch`).

    Keyset pages: each session appears once while the sort values do not change; a
    session whose value changes between two pages (an append bumps `updated_at`,
    `message_count`, `total_tokens`) may move past the cursor or be met again.
    """
    return await sessions.page(
        limit=limit, cursor=cursor, sort=sort, order=order, id_prefix=id_prefix
    )


@router.get("/{session_id}")
async def get_session(session_id: SessionId, sessions: SessionReader) -> SessionRead:
    """The session with its message count, token total and summary state."""
    return await sessions.read(session_id)


@router.patch("/{session_id}", responses=BODY_ERRORS)
async def update_session(
    session_id: SessionId, body: SessionUpdate, sessions: Sessions
) -> SessionRead:
    """Change the given fields: `settings` merges key by key, `metadata` replaces."""
    return await sessions.update(session_id, body)


@router.delete("/{session_id}", status_code=204, response_class=Response)
async def delete_session(session_id: SessionId, sessions: Sessions) -> Response:
    """Delete the session with its messages and summaries (the only path that removes them)."""
    await sessions.delete(session_id)
    return Response(status_code=204)


@router.delete("")
async def delete_sessions(
    sessions: Sessions,
    id_prefix: Annotated[
        str,
        Query(
            pattern=ID_PREFIX,
            min_length=1,
            description="Delete this tenant's sessions whose id starts with this "
            "(case-sensitive), e.g. one user's `user-42:` sessions.",
        ),
    ],
) -> SessionsDeleted:
    """Delete every session of this tenant whose id starts with `id_prefix`, each with all
    its rows, in one transaction."""
    return await sessions.delete_by_prefix(id_prefix)
