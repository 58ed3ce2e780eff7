"""Vendor wire formats (OpenAI Responses, Anthropic Messages) to and from Chat Completions."""

from ttmemory.integrations.formats.anthropic import from_anthropic, to_anthropic
from ttmemory.integrations.formats.responses import from_responses_items, to_responses_items

__all__ = ["from_anthropic", "from_responses_items", "to_anthropic", "to_responses_items"]
