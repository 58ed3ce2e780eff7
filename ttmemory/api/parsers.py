"""A JSON parser that enforces ``API_MAX_REQUEST_BYTES`` and refuses what cannot be stored."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rest_framework import status
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import JSONParser

from ttmemory.conf import app_settings


class RequestTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "Request body too large."
    default_code = "request_too_large"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _check_text(value: Any) -> None:
    """Lone surrogates ("\\ud800") parse in Python but cannot be encrypted or stored."""
    if isinstance(value, str):
        value.encode("utf-8")
    elif isinstance(value, Mapping):
        for key, item in value.items():
            _check_text(key)
            _check_text(item)
    elif isinstance(value, list):
        for item in value:
            _check_text(item)


class BoundedJSONParser(JSONParser):
    """JSON bodies up to ``API_MAX_REQUEST_BYTES`` (413 above); NaN and lone surrogates are 400."""

    def parse(
        self,
        stream: Any,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        limit = app_settings.API_MAX_REQUEST_BYTES
        body = stream.read(limit + 1) if stream is not None else b""
        if len(body) > limit:
            raise RequestTooLarge(f"Request body is larger than {limit} bytes.")
        try:
            data = json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
            _check_text(data)
        except UnicodeError as exc:
            raise ParseError("JSON parse error - text is not valid UTF-8.") from exc
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from exc
        return data
