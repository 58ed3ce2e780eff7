from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.legal_hold_request import LegalHoldRequest
from ...models.problem import Problem
from ...models.retention import Retention
from ...types import Response


def _get_kwargs(
    *,
    body: LegalHoldRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/namespace/holds/",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | Retention | None:
    if response.status_code == 201:
        response_201 = Retention.from_dict(response.json())

        return response_201

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())

        return response_413

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())

        return response_429

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | Retention]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: LegalHoldRequest,
) -> Response[Problem | Retention]:
    """Place a legal hold on the namespace or one of its sessions

     While held, nothing in its scope is deleted: no expiry or pruning, and erase, session delete, clear
    and fact forget answer 423 naming the hold.

    Args:
        body (LegalHoldRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | Retention]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: LegalHoldRequest,
) -> Problem | Retention | None:
    """Place a legal hold on the namespace or one of its sessions

     While held, nothing in its scope is deleted: no expiry or pruning, and erase, session delete, clear
    and fact forget answer 423 naming the hold.

    Args:
        body (LegalHoldRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | Retention
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: LegalHoldRequest,
) -> Response[Problem | Retention]:
    """Place a legal hold on the namespace or one of its sessions

     While held, nothing in its scope is deleted: no expiry or pruning, and erase, session delete, clear
    and fact forget answer 423 naming the hold.

    Args:
        body (LegalHoldRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | Retention]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: LegalHoldRequest,
) -> Problem | Retention | None:
    """Place a legal hold on the namespace or one of its sessions

     While held, nothing in its scope is deleted: no expiry or pruning, and erase, session delete, clear
    and fact forget answer 423 naming the hold.

    Args:
        body (LegalHoldRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | Retention
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
