"""Strict fakes of outside services (OpenAI-compatible HTTP APIs) for the tests."""

from tests.fakes.openai_server import ApiError, FakeOpenAI, RecordedRequest, Scripted

__all__ = ["ApiError", "FakeOpenAI", "RecordedRequest", "Scripted"]
