"""The pure heart of Foldwise: budget → prune → fold plan → truncate → render → validate.

No database, no HTTP, no clock: every function here takes plain data and returns
plain data, so the invariants of docs/reference.md §Invariants are property-tested in milliseconds.
"""
