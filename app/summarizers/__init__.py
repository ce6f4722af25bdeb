"""Summarizers turn (previous summary + new messages) into an updated summary (SPEC §5)."""
