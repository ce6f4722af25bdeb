"""API fixtures: a test that asks for `recorder` gets an `app` whose folds call it."""

from __future__ import annotations

import pytest
from fastapi import FastAPI

from app.core.settings import Settings
from app.main import create_app
from tests.api.recording_summarizer import RecordingSummarizer


@pytest.fixture
def recorder() -> RecordingSummarizer:
    return RecordingSummarizer()


@pytest.fixture
def app(settings: Settings, request: pytest.FixtureRequest) -> FastAPI:
    if "recorder" in request.fixturenames:
        recorder: RecordingSummarizer = request.getfixturevalue("recorder")
        return create_app(settings, summarizer_factory=recorder.factory)
    return create_app(settings)
