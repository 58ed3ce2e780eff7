"""The OpenAPI document and its docs page: ttmemory's own views only, whatever the project's
REST_FRAMEWORK and SPECTACULAR_SETTINGS say. The API-key scheme extension is loaded through
apps.ready."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.views import SpectacularSwaggerView

from ttmemory.api.base import MemoryViewSet

TITLE = "ttmemory API"
SETTINGS = {
    "TITLE": TITLE,
    "DESCRIPTION": "Session memory, snapshots and long-term memory for LLM agents.",
    "VERSION": "1",
    "COMPONENT_SPLIT_REQUEST": True,
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
        return paths


class MemorySwaggerView(SpectacularSwaggerView):
    """Swagger UI with a title; its files come from drf-spectacular-sidecar when that app is
    installed (no CDN), else from the CDN drf-spectacular names (``ttmemory.W002`` says so)."""

    title = TITLE

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
