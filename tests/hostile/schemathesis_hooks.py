"""Schemathesis extension for the fuzz run (tests/hostile/test_schemathesis.py): a generated
`application/x-ndjson` body (POST /sessions/import) goes on the wire as text, like
`text/plain` (loaded through SCHEMATHESIS_HOOKS)."""

import schemathesis

schemathesis.serializer.alias("application/x-ndjson", "text/plain")
