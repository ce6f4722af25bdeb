"""The pure heart of Foldwise: budget → prune → fold plan → truncate → render → validate.

No database, no HTTP, no clock: every function here takes plain data and returns
plain data, so SPEC §6's invariants are property-tested in milliseconds.
"""
