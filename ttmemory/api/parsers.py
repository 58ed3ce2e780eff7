"""The API's JSON parser: its own size limit (``API_MAX_REQUEST_BYTES``, 413), a depth limit
checked before parsing, and nothing that cannot be stored (NaN, infinities, lone surrogates)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from rest_framework import status
from rest_framework.exceptions import APIException, ParseError, ValidationError
from rest_framework.parsers import BaseParser

from ttmemory.conf import app_settings
from ttmemory.validation import MAX_JSON_DEPTH, printable

# A JSON string literal (escapes included): brackets inside strings do not nest anything.
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:,]')
# How many steps of the path a too-deep body's error names (``messages[0].content``).
_SHOWN_STEPS = 3


class RequestTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "Request body too large."
    default_code = "request_too_large"


def json_depth(text: str, *, stop_above: int) -> int:
    """How deep arrays and objects nest in JSON ``text`` (strings ignored), counting no
    further than ``stop_above + 1``: the parser never recurses deeper than it was allowed."""
    if text.count("[") + text.count("{") <= stop_above:
        return 0  # cannot nest deeper than it has brackets
    depth = deepest = 0
    for bracket in _NOT_BRACKET.sub("", _STRING.sub("", text)):
        if bracket in "[{":
            depth += 1
            if depth > stop_above:
                return depth
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def _too_deep_where(text: str, *, limit: int) -> str:
    """The first steps of the path to where ``text`` nests deeper than ``limit`` (only run on
    a body already refused, and only up to that point)."""
    steps: list[str] = []  # the step inside each open container, outermost first
    kinds: list[str] = []
    last_string = '""'
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token[0] == '"':
            last_string = token
        elif token in "[{":
            if len(kinds) >= limit:
                break
            kinds.append(token)
            steps.append("[0]" if token == "[" else "")
        elif token in "]}":
            if kinds:
                kinds.pop()
                steps.pop()
        elif not kinds:
            continue
        elif token == ":" and kinds[-1] == "{":
            try:
                steps[-1] = "." + str(json.loads(last_string))
            except ValueError:
                steps[-1] = "." + last_string
        elif token == "," and kinds[-1] == "[":
            steps[-1] = f"[{int(steps[-1][1:-1]) + 1}]"
    return "".join(steps[:_SHOWN_STEPS]).lstrip(".") or "body"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _check_parsed(value: Any, path: str) -> None:
    """What Python's parser accepts but JSON storage cannot hold, named by its path:
    numbers too large for a double (``1e999`` parses as infinity) and lone surrogates."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValidationError({path or "body": ["number out of range (not a finite number)"]})
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValidationError(
                {path or "body": ["contains a lone surrogate (not valid Unicode)"]}
            ) from None
    elif isinstance(value, Mapping):
        for key, item in value.items():
            # The path names the key with its surrogates escaped: the error must render.
            shown = printable(str(key))
            child = f"{path}.{shown}" if path else shown
            _check_parsed(key, child)
            _check_parsed(item, child)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_parsed(item, f"{path}[{index}]")


class BoundedJSONParser(BaseParser):
    """JSON bodies up to ``API_MAX_REQUEST_BYTES`` (413 above), nested at most
    ``MAX_JSON_DEPTH`` deep (checked before parsing: 400 naming the field, its first three
    steps); NaN, infinities and lone surrogates are 400 naming where they are.

    Not a subclass of DRF's JSONParser on purpose: DRF hands JSONParser ``request.body``,
    which Django caps at ``DATA_UPLOAD_MAX_MEMORY_SIZE`` with an HTML 400; this parser reads
    the stream itself, so the API's own limit is the one that answers.
    """

    media_type = "application/json"

    def parse(
        self,
        stream: Any,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        limit = app_settings.API_MAX_REQUEST_BYTES
        request = (parser_context or {}).get("request")
        declared = request.META.get("CONTENT_LENGTH") if request is not None else None
        too_large = f"Request body is larger than {limit} bytes."
        if declared and str(declared).isdigit() and int(declared) > limit:
            raise RequestTooLarge(too_large)
        body = stream.read(limit + 1) if stream is not None else b""
        if len(body) > limit:
            raise RequestTooLarge(too_large)
        try:
            text = body.decode("utf-8")
        except UnicodeError as exc:
            raise ParseError("JSON parse error - text is not valid UTF-8.") from exc
        if json_depth(text, stop_above=MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
            where = _too_deep_where(text, limit=MAX_JSON_DEPTH)
            raise ValidationError(
                {where: [f"nests arrays and objects deeper than {MAX_JSON_DEPTH} levels"]}
            )
        try:
            data = json.loads(text, parse_constant=_reject_constant)
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from exc
        _check_parsed(data, "")
        return data
