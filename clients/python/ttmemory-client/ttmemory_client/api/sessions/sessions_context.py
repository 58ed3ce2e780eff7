from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.context import Context
from ...models.problem import Problem
from ...types import UNSET, Response


def _get_kwargs(
    session_id: int,
    *,
    max_tokens: int,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["max_tokens"] = max_tokens

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/sessions/{session_id}/context/".format(
            session_id=quote(str(session_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Context | Problem | None:
    if response.status_code == 200:
        response_200 = Context.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Context | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    session_id: int,
    *,
    client: AuthenticatedClient,
    max_tokens: int,
) -> Response[Context | Problem]:
    """The context window for a token budget, ready to send to a model

     The rolling summary and system messages first, then whole turns (a user message with its replies; a
    tool call with all its results), newest first, in chronological order, never over `max_tokens`. When
    the newest turn does not fit, its question and newest groups are kept, so the window never starts
    with an orphan answer. When what must be kept (system messages, summary, the newest group and its
    question) exceeds `max_tokens`, the answer is 400 naming `max_tokens` with the tokens required.
    Repaired for the model: orphan tool results are dropped and unanswered calls get an 'interrupted'
    result; the stored history is not changed.

    Args:
        session_id (int):
        max_tokens (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Context | Problem]
    """

    kwargs = _get_kwargs(
        session_id=session_id,
        max_tokens=max_tokens,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    session_id: int,
    *,
    client: AuthenticatedClient,
    max_tokens: int,
) -> Context | Problem | None:
    """The context window for a token budget, ready to send to a model

     The rolling summary and system messages first, then whole turns (a user message with its replies; a
    tool call with all its results), newest first, in chronological order, never over `max_tokens`. When
    the newest turn does not fit, its question and newest groups are kept, so the window never starts
    with an orphan answer. When what must be kept (system messages, summary, the newest group and its
    question) exceeds `max_tokens`, the answer is 400 naming `max_tokens` with the tokens required.
    Repaired for the model: orphan tool results are dropped and unanswered calls get an 'interrupted'
    result; the stored history is not changed.

    Args:
        session_id (int):
        max_tokens (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Context | Problem
    """

    return sync_detailed(
        session_id=session_id,
        client=client,
        max_tokens=max_tokens,
    ).parsed


async def asyncio_detailed(
    session_id: int,
    *,
    client: AuthenticatedClient,
    max_tokens: int,
) -> Response[Context | Problem]:
    """The context window for a token budget, ready to send to a model

     The rolling summary and system messages first, then whole turns (a user message with its replies; a
    tool call with all its results), newest first, in chronological order, never over `max_tokens`. When
    the newest turn does not fit, its question and newest groups are kept, so the window never starts
    with an orphan answer. When what must be kept (system messages, summary, the newest group and its
    question) exceeds `max_tokens`, the answer is 400 naming `max_tokens` with the tokens required.
    Repaired for the model: orphan tool results are dropped and unanswered calls get an 'interrupted'
    result; the stored history is not changed.

    Args:
        session_id (int):
        max_tokens (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Context | Problem]
    """

    kwargs = _get_kwargs(
        session_id=session_id,
        max_tokens=max_tokens,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    session_id: int,
    *,
    client: AuthenticatedClient,
    max_tokens: int,
) -> Context | Problem | None:
    """The context window for a token budget, ready to send to a model

     The rolling summary and system messages first, then whole turns (a user message with its replies; a
    tool call with all its results), newest first, in chronological order, never over `max_tokens`. When
    the newest turn does not fit, its question and newest groups are kept, so the window never starts
    with an orphan answer. When what must be kept (system messages, summary, the newest group and its
    question) exceeds `max_tokens`, the answer is 400 naming `max_tokens` with the tokens required.
    Repaired for the model: orphan tool results are dropped and unanswered calls get an 'interrupted'
    result; the stored history is not changed.

    Args:
        session_id (int):
        max_tokens (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Context | Problem
    """

    return (
        await asyncio_detailed(
            session_id=session_id,
            client=client,
            max_tokens=max_tokens,
        )
    ).parsed
