from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.edit_request import EditRequest
from ...models.problem import Problem
from ...models.session_detail import SessionDetail
from ...types import UNSET, Response, Unset


def _get_kwargs(
    session_id: int,
    *,
    body: EditRequest,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/sessions/{session_id}/edit/".format(
            session_id=quote(str(session_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | SessionDetail | None:
    if response.status_code == 201:
        response_201 = SessionDetail.from_dict(response.json())

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

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())

        return response_409

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())

        return response_413

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())

        return response_422

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
) -> Response[Problem | SessionDetail]:
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
    body: EditRequest,
    idempotency_key: str | Unset = UNSET,
) -> Response[Problem | SessionDetail]:
    """Edit a message into a new branch (edit and regenerate)

     Forks the session before message `seq` and appends `message` in its place; answers with the new
    branch, whose newest message is the edited one (ask the model for its answer next). The session
    itself stays as the previous branch. 409 when the seq is not a live message of the session (never
    stored, trimmed, or removed by a rollback or rewind) or cutting there would split a tool group (a
    call and its results are kept or removed whole); `group` then names the group's first and last seq,
    so cut before the first or at the last.

    Args:
        session_id (int):
        idempotency_key (str | Unset):
        body (EditRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SessionDetail]
    """

    kwargs = _get_kwargs(
        session_id=session_id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    session_id: int,
    *,
    client: AuthenticatedClient,
    body: EditRequest,
    idempotency_key: str | Unset = UNSET,
) -> Problem | SessionDetail | None:
    """Edit a message into a new branch (edit and regenerate)

     Forks the session before message `seq` and appends `message` in its place; answers with the new
    branch, whose newest message is the edited one (ask the model for its answer next). The session
    itself stays as the previous branch. 409 when the seq is not a live message of the session (never
    stored, trimmed, or removed by a rollback or rewind) or cutting there would split a tool group (a
    call and its results are kept or removed whole); `group` then names the group's first and last seq,
    so cut before the first or at the last.

    Args:
        session_id (int):
        idempotency_key (str | Unset):
        body (EditRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SessionDetail
    """

    return sync_detailed(
        session_id=session_id,
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    session_id: int,
    *,
    client: AuthenticatedClient,
    body: EditRequest,
    idempotency_key: str | Unset = UNSET,
) -> Response[Problem | SessionDetail]:
    """Edit a message into a new branch (edit and regenerate)

     Forks the session before message `seq` and appends `message` in its place; answers with the new
    branch, whose newest message is the edited one (ask the model for its answer next). The session
    itself stays as the previous branch. 409 when the seq is not a live message of the session (never
    stored, trimmed, or removed by a rollback or rewind) or cutting there would split a tool group (a
    call and its results are kept or removed whole); `group` then names the group's first and last seq,
    so cut before the first or at the last.

    Args:
        session_id (int):
        idempotency_key (str | Unset):
        body (EditRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SessionDetail]
    """

    kwargs = _get_kwargs(
        session_id=session_id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    session_id: int,
    *,
    client: AuthenticatedClient,
    body: EditRequest,
    idempotency_key: str | Unset = UNSET,
) -> Problem | SessionDetail | None:
    """Edit a message into a new branch (edit and regenerate)

     Forks the session before message `seq` and appends `message` in its place; answers with the new
    branch, whose newest message is the edited one (ask the model for its answer next). The session
    itself stays as the previous branch. 409 when the seq is not a live message of the session (never
    stored, trimmed, or removed by a rollback or rewind) or cutting there would split a tool group (a
    call and its results are kept or removed whole); `group` then names the group's first and last seq,
    so cut before the first or at the last.

    Args:
        session_id (int):
        idempotency_key (str | Unset):
        body (EditRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SessionDetail
    """

    return (
        await asyncio_detailed(
            session_id=session_id,
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
