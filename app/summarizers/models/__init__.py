"""The LLMs a summary can come from, one adapter per API behind `SummaryModel`."""
