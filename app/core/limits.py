"""Bounds every layer checks against the database's column types."""

# Integer query/body parameters that become SQL integers (seqs, counts): PostgreSQL `integer`.
MAX_SQL_INT = 2**31 - 1
