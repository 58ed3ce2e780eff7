"""Tolerant, safe JSON extraction from model output: fences and prose are fine, nothing is run."""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)


def parse_json_loosely(text: str) -> Any:
    """The first JSON object or array in ``text``; ValueError if there is none.

    Accepts a bare JSON document, one inside a Markdown code fence, or one surrounded by prose.
    Only ``json.loads`` ever sees the text: nothing is evaluated.
    """
    if not isinstance(text, str):
        raise ValueError("model output is not text")
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        candidate = candidate.strip()
        for index, char in enumerate(candidate):
            if char not in "{[":
                continue
            try:
                value, _ = decoder.raw_decode(candidate, index)
            except ValueError:
                continue
            return value
    raise ValueError("no JSON object or array found in the model output")
