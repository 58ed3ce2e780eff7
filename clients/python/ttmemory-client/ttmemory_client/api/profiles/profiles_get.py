from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.profiles_get_response_200 import ProfilesGetResponse200
from ...types import Response


def _get_kwargs(
    kind: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/profile/{kind}/".format(
            kind=quote(str(kind), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | ProfilesGetResponse200 | None:
    if response.status_code == 200:
        response_200 = ProfilesGetResponse200.from_dict(response.json())

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


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Problem | ProfilesGetResponse200]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    kind: str,
    *,
    client: AuthenticatedClient,
) -> Response[Problem | ProfilesGetResponse200]:
    """One profile's data ({} when none)

     Authenticated by API key, session or token; every object lookup is within the caller's
    namespace, so another namespace's ids answer 404 exactly like ids that do not exist.

    Args:
        kind (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ProfilesGetResponse200]
    """

    kwargs = _get_kwargs(
        kind=kind,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    kind: str,
    *,
    client: AuthenticatedClient,
) -> Problem | ProfilesGetResponse200 | None:
    """One profile's data ({} when none)

     Authenticated by API key, session or token; every object lookup is within the caller's
    namespace, so another namespace's ids answer 404 exactly like ids that do not exist.

    Args:
        kind (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ProfilesGetResponse200
    """

    return sync_detailed(
        kind=kind,
        client=client,
    ).parsed


async def asyncio_detailed(
    kind: str,
    *,
    client: AuthenticatedClient,
) -> Response[Problem | ProfilesGetResponse200]:
    """One profile's data ({} when none)

     Authenticated by API key, session or token; every object lookup is within the caller's
    namespace, so another namespace's ids answer 404 exactly like ids that do not exist.

    Args:
        kind (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ProfilesGetResponse200]
    """

    kwargs = _get_kwargs(
        kind=kind,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    kind: str,
    *,
    client: AuthenticatedClient,
) -> Problem | ProfilesGetResponse200 | None:
    """One profile's data ({} when none)

     Authenticated by API key, session or token; every object lookup is within the caller's
    namespace, so another namespace's ids answer 404 exactly like ids that do not exist.

    Args:
        kind (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ProfilesGetResponse200
    """

    return (
        await asyncio_detailed(
            kind=kind,
            client=client,
        )
    ).parsed
