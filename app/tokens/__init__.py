"""Offline token counting: verified tiktoken encodings, the model registry, message overheads."""
