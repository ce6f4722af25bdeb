"""Repositories: the only modules that build SQL. They flush, never commit."""

from app.repositories.messages import MessageRepository
from app.repositories.sessions import SessionRepository, SessionStats

__all__ = ["MessageRepository", "SessionRepository", "SessionStats"]
