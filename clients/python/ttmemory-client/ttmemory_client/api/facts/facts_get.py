from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.fact import Fact
from ...models.problem import Problem
from ...types import Response


def _get_kwargs(
    fact_id: int,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/facts/{fact_id}/".format(
            fact_id=quote(str(fact_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Fact | Problem | None:
    if response.status_code == 200:
        response_200 = Fact.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Fact | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    fact_id: int,
    *,
    client: AuthenticatedClient,
) -> Response[Fact | Problem]:
    """Get a fact (any version; follow superseded_by for the newer one)

     Authenticated by API key, session or token; every object lookup is within the caller's
    namespace, so another namespace's ids answer 404 exactly like ids that do not exist.

    Args:
        fact_id (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Fact | Problem]
    """

    kwargs = _get_kwargs(
        fact_id=fact_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    fact_id: int,
    *,
    client: AuthenticatedClient,
) -> Fact | Problem | None:
    """Get a fact (any version; follow superseded_by for the newer one)

     Authenticated by API key, session or token; every object lookup is within the caller's
    namespace, so another namespace's ids answer 404 exactly like ids that do not exist.

    Args:
        fact_id (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Fact | Problem
    """

    return sync_detailed(
        fact_id=fact_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    fact_id: int,
    *,
    client: AuthenticatedClient,
) -> Response[Fact | Problem]:
    """Get a fact (any version; follow superseded_by for the newer one)

     Authenticated by API key, session or token; every object lookup is within the caller's
    namespace, so another namespace's ids answer 404 exactly like ids that do not exist.

    Args:
        fact_id (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Fact | Problem]
    """

    kwargs = _get_kwargs(
        fact_id=fact_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    fact_id: int,
    *,
    client: AuthenticatedClient,
) -> Fact | Problem | None:
    """Get a fact (any version; follow superseded_by for the newer one)

     Authenticated by API key, session or token; every object lookup is within the caller's
    namespace, so another namespace's ids answer 404 exactly like ids that do not exist.

    Args:
        fact_id (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Fact | Problem
    """

    return (
        await asyncio_detailed(
            fact_id=fact_id,
            client=client,
        )
    ).parsed
