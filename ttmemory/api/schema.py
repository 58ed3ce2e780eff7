"""The OpenAPI document and its docs page: ttmemory's own views only, whatever the project's
REST_FRAMEWORK and SPECTACULAR_SETTINGS say. The API-key scheme extension is loaded through
apps.ready."""

from __future__ import annotations

import json
import posixpath
from typing import Any

from django.apps import apps
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.renderers import JSONRenderer

from ttmemory.api.base import MemoryViewSet
from ttmemory.api.exceptions import PROBLEM_CONTENT_TYPE, api_exception_handler, as_problem

TITLE = "ttmemory API"
SETTINGS = {
    "TITLE": TITLE,
    "DESCRIPTION": "Session memory, snapshots and long-term memory for LLM agents.",
    "VERSION": "1",
    "COMPONENT_SPLIT_REQUEST": True,
    # Paths are relative to the mount point, which is the document's server URL: a client
    # generated from it works wherever a project mounts the API.
    "SCHEMA_PATH_PREFIX_TRIM": True,
}


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "ttmemory.api.authentication.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Api-Key ttm_…`; name the namespace in `X-Memory-Namespace` "
            "when the key is granted several.",
        }


class MemorySchemaGenerator(SchemaGenerator):
    """Documents ttmemory's views wherever they are mounted, and nothing else the project
    serves (another view's schema class, or the docs page itself, cannot break it)."""

    def _get_paths_and_endpoints(self) -> list[Any]:
        # drf-spectacular's endpoints are (path, path_regex, method, callback).
        endpoints: Any = self.endpoints or []
        self.endpoints = [
            endpoint
            for endpoint in endpoints
            if issubclass(getattr(endpoint[-1], "cls", object), MemoryViewSet)
        ]
        paths: list[Any] = super()._get_paths_and_endpoints()
        self.mount = posixpath.commonpath([path for path, *_ in paths]) if paths else "/"
        return paths

    def get_schema(self, request: Any = None, public: bool = False) -> Any:
        self.mount = "/"
        schema = super().get_schema(request=request, public=public)
        # drf-spectacular trimmed the common prefix (the mount) from every path.
        servers = [{"url": self.mount, "description": "where the API is mounted"}]
        head = {"openapi": schema.pop("openapi"), "info": schema.pop("info"), "servers": servers}
        return _short_request_names(head | schema)


def _short_request_names(schema: dict[str, Any]) -> dict[str, Any]:
    """``EraseRequest``, not ``EraseRequestRequest``: drf-spectacular adds "Request" to the
    components a client sends, also to serializers already named for a request body."""
    components = schema.get("components", {}).get("schemas", {})
    renames = {
        name: name.removesuffix("Request")
        for name in components
        if name.endswith("RequestRequest") and name.removesuffix("Request") not in components
    }
    if not renames:
        return schema
    text = json.dumps(schema)
    for old, new in renames.items():
        text = text.replace(f'"#/components/schemas/{old}"', f'"#/components/schemas/{new}"')
    renamed: dict[str, Any] = json.loads(text)
    schemas = renamed["components"]["schemas"]
    renamed["components"]["schemas"] = {renames.get(k, k): v for k, v in schemas.items()}
    return renamed


class MemorySchemaView(SpectacularAPIView):
    """The OpenAPI document; its errors (a POST, say) are problem details like the API's."""

    schema = None  # the document, not an endpoint of it (as MemorySwaggerView)

    def get_exception_handler(self) -> Any:
        return api_exception_handler

    def finalize_response(self, request: Any, response: Any, *args: Any, **kwargs: Any) -> Any:
        response = super().finalize_response(request, response, *args, **kwargs)
        if response.status_code >= 400:  # JSON, whatever format the document was asked in
            response.accepted_renderer = JSONRenderer()
            response.accepted_media_type = PROBLEM_CONTENT_TYPE
        return as_problem(response)


class MemorySwaggerView(SpectacularSwaggerView):
    """Swagger UI with a title; its files come from drf-spectacular-sidecar when that app is
    installed (no CDN), else from the CDN drf-spectacular names (``ttmemory.W003`` says so)."""

    title = TITLE
    # Not an endpoint of the API: left out of every schema (DRF's convention). drf-spectacular's
    # deploy check generates the project's schema, where a project whose DEFAULT_SCHEMA_CLASS
    # is DRF's own would otherwise fail on this view ("Incompatible AutoSchema", E001).
    schema = None

    @staticmethod
    def _swagger_ui_resource(filename: str) -> str:
        if apps.is_installed("drf_spectacular_sidecar"):
            from drf_spectacular.views import _get_sidecar_url  # a private helper, stable

            return str(_get_sidecar_url(f"swagger-ui-dist/{filename}"))
        return str(SpectacularSwaggerView._swagger_ui_resource(filename))

    @staticmethod
    def _swagger_ui_favicon() -> str:
        if apps.is_installed("drf_spectacular_sidecar"):
            from drf_spectacular.views import _get_sidecar_url

            return str(_get_sidecar_url("swagger-ui-dist/favicon-32x32.png"))
        return str(SpectacularSwaggerView._swagger_ui_favicon())
