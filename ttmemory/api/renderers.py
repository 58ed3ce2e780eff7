"""DRF's JSON renderer and content negotiation, faster where the answer is the same byte for byte.

On the API's hot routes (a 50-message page, an append) DRF's ``JSONRenderer`` (``json.dumps``
with DRF's encoder) and its Accept-header negotiation were about a tenth of a request's CPU
(``bench/api_profile.py --profile``); orjson (a dependency of ttmemory already) renders a page
of 50 messages more than ten times faster than ``json.dumps``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer, JSONRenderer

# orjson serializes these types itself, differently from DRF's encoder (datetimes are
# rendered with milliseconds by DRF); passed through, they end in ``_refuse`` and json.dumps.
_PASSTHROUGH = (
    orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)
_LINE_SEPARATOR = "\u2028".encode()
_PARAGRAPH_SEPARATOR = "\u2029".encode()


class _NotPlainJSON(TypeError):
    pass


def _refuse(value: Any) -> Any:
    raise _NotPlainJSON


class FastJSONRenderer(JSONRenderer):
    """``JSONRenderer``, rendering with orjson when the bytes are certainly the same.

    Only for views that set ``json_finite = True``: their answers hold JSON values ttmemory
    validated when they were stored or built (never NaN or an infinity, which orjson would
    write as ``null`` where ``json.dumps`` refuses them). Anything else orjson would spell
    differently (a float below 1e-4, a subclass of a JSON type, a datetime, an integer beyond
    64 bits, a non-string key, pretty-printing) is rendered by ``JSONRenderer`` itself.
    """

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        if (
            data is not None
            and renderer_context is not None
            and getattr(renderer_context.get("view"), "json_finite", False)
            and self.compact
            and not self.ensure_ascii
            and self.get_indent(accepted_media_type or "", renderer_context) is None
        ):
            try:
                rendered = orjson.dumps(data, default=_refuse, option=_PASSTHROUGH)
            except (_NotPlainJSON, orjson.JSONEncodeError):
                pass
            else:
                if not _float_spelled_otherwise(rendered):
                    # As JSONRenderer: the two separators escaped (JSON a subset of JavaScript).
                    if b"\xe2\x80" in rendered:
                        rendered = rendered.replace(_LINE_SEPARATOR, b"\\u2028").replace(
                            _PARAGRAPH_SEPARATOR, b"\\u2029"
                        )
                    return rendered
        rendered_by_drf: bytes = super().render(data, accepted_media_type, renderer_context)
        return rendered_by_drf


def _float_spelled_otherwise(rendered: bytes) -> bool:
    """Whether orjson may have written a float otherwise than ``json.dumps`` (``repr``) does:
    it writes the small ones positionally (0.00001 for 1e-05) and negative exponents unpadded
    (1e-7 for 1e-07); every float it spells otherwise holds "0.0000" or a digit before "e-"
    (checked against ``repr`` for millions of random floats). A string holding one of them
    also answers True: slower (``json.dumps``), never different. Plain ``in``/``find``: a
    regular expression cost more than the rendering it guards."""
    if b"0.0000" in rendered:
        return True
    at = rendered.find(b"e-")
    while at > 0:
        if 48 <= rendered[at - 1] <= 57:  # a digit
            return True
        at = rendered.find(b"e-", at + 2)
    return False


def fast_renderers(renderers: list[BaseRenderer]) -> list[BaseRenderer]:
    """``renderers`` with DRF's own ``JSONRenderer`` (that class, not a project's subclass)
    served by ``FastJSONRenderer``; the order, and so negotiation, unchanged."""
    return [
        FastJSONRenderer() if type(renderer) is JSONRenderer else renderer for renderer in renderers
    ]


class FastContentNegotiation(DefaultContentNegotiation):
    """``DefaultContentNegotiation`` answering the usual request without parsing its Accept
    header: no header, ``*/*`` or ``application/json``, no format suffix or ``?format=``, and
    a first renderer of ``application/json``. It would choose that renderer and that media
    type too; every other request is negotiated by the parent."""

    def select_renderer(
        self, request: Any, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        accept = request.META.get("HTTP_ACCEPT")
        first = renderers[0] if isinstance(renderers, list) and renderers else None
        if (
            not format_suffix
            and first is not None
            and first.media_type == "application/json"
            and (accept is None or accept in ("*/*", "application/json"))
            and self.settings.URL_FORMAT_OVERRIDE not in request.query_params
        ):
            return first, "application/json"
        chosen: tuple[BaseRenderer, str] = super().select_renderer(
            request, renderers, format_suffix
        )
        return chosen
