from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.message_search import MessageSearch
from ...models.message_search_request import MessageSearchRequest
from ...models.problem import Problem
from ...types import Response


def _get_kwargs(
    *,
    body: MessageSearchRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/messages/search/",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> MessageSearch | Problem | None:
    if response.status_code == 200:
        response_200 = MessageSearch.from_dict(response.json())

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


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[MessageSearch | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: MessageSearchRequest,
) -> Response[MessageSearch | Problem]:
    """Search past messages by meaning and keyword, with neighbouring turns

     Episodic recall over every message of the namespace (archived ones too): hybrid keyword and vector
    scoring like fact recall, where each message also matches on its neighbours' words. Each hit carries
    up to ``window`` messages of its session on each side as ``context``.

    Args:
        body (MessageSearchRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[MessageSearch | Problem]
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
    body: MessageSearchRequest,
) -> MessageSearch | Problem | None:
    """Search past messages by meaning and keyword, with neighbouring turns

     Episodic recall over every message of the namespace (archived ones too): hybrid keyword and vector
    scoring like fact recall, where each message also matches on its neighbours' words. Each hit carries
    up to ``window`` messages of its session on each side as ``context``.

    Args:
        body (MessageSearchRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        MessageSearch | Problem
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: MessageSearchRequest,
) -> Response[MessageSearch | Problem]:
    """Search past messages by meaning and keyword, with neighbouring turns

     Episodic recall over every message of the namespace (archived ones too): hybrid keyword and vector
    scoring like fact recall, where each message also matches on its neighbours' words. Each hit carries
    up to ``window`` messages of its session on each side as ``context``.

    Args:
        body (MessageSearchRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[MessageSearch | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: MessageSearchRequest,
) -> MessageSearch | Problem | None:
    """Search past messages by meaning and keyword, with neighbouring turns

     Episodic recall over every message of the namespace (archived ones too): hybrid keyword and vector
    scoring like fact recall, where each message also matches on its neighbours' words. Each hit carries
    up to ``window`` messages of its session on each side as ``context``.

    Args:
        body (MessageSearchRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        MessageSearch | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
