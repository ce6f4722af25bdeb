"""Summarizers turn (previous summary + new messages) into an updated summary
(docs/reference.md §Summaries)."""
