"""The router: DRF's SimpleRouter with path converters, naming routes as the API always has."""

from __future__ import annotations

from rest_framework.routers import DynamicRoute, Route, SimpleRouter


class MemoryRouter(SimpleRouter):
    """``SimpleRouter(use_regex_path=False)``: lookups use each viewset's
    ``lookup_value_converter`` (``<int:...>``), and prefixes may hold converters too, which is
    how nested resources register (``sessions/<int:session_id>/messages``).

    URL names are the ones the API had before it used a router: a list is
    ``<basename>-list``, an object ``<basename>`` (not ``<basename>-detail``) and an
    ``@action`` its own ``url_name`` (``ttmemory-api:snapshot-rollback``, ``ttmemory-api:trim``).
    """

    routes = [
        route._replace(name="{url_name}")
        if isinstance(route, DynamicRoute)
        else route._replace(name="{basename}")
        if isinstance(route, Route) and route.detail
        else route
        for route in SimpleRouter.routes
    ]

    def __init__(self) -> None:
        super().__init__(trailing_slash=True, use_regex_path=False)
