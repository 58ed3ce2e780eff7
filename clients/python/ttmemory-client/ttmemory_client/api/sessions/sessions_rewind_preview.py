from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.snapshot_diff import SnapshotDiff
from ...types import UNSET, Response


def _get_kwargs(
    session_id: int,
    *,
    to_seq: int,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["to_seq"] = to_seq

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/sessions/{session_id}/rewind/".format(
            session_id=quote(str(session_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | SnapshotDiff | None:
    if response.status_code == 200:
        response_200 = SnapshotDiff.from_dict(response.json())

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

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())

        return response_409

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Problem | SnapshotDiff]:
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
    to_seq: int,
) -> Response[Problem | SnapshotDiff]:
    """Preview a rewind: the messages and facts it would remove; nothing changes

     409 when the seq is not a live message of the session (never stored, trimmed, or removed by a
    rollback or rewind) or cutting there would split a tool group (a call and its results are kept or
    removed whole); `group` then names the group's first and last seq, so cut before the first or at the
    last.

    Args:
        session_id (int):
        to_seq (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SnapshotDiff]
    """

    kwargs = _get_kwargs(
        session_id=session_id,
        to_seq=to_seq,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    session_id: int,
    *,
    client: AuthenticatedClient,
    to_seq: int,
) -> Problem | SnapshotDiff | None:
    """Preview a rewind: the messages and facts it would remove; nothing changes

     409 when the seq is not a live message of the session (never stored, trimmed, or removed by a
    rollback or rewind) or cutting there would split a tool group (a call and its results are kept or
    removed whole); `group` then names the group's first and last seq, so cut before the first or at the
    last.

    Args:
        session_id (int):
        to_seq (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SnapshotDiff
    """

    return sync_detailed(
        session_id=session_id,
        client=client,
        to_seq=to_seq,
    ).parsed


async def asyncio_detailed(
    session_id: int,
    *,
    client: AuthenticatedClient,
    to_seq: int,
) -> Response[Problem | SnapshotDiff]:
    """Preview a rewind: the messages and facts it would remove; nothing changes

     409 when the seq is not a live message of the session (never stored, trimmed, or removed by a
    rollback or rewind) or cutting there would split a tool group (a call and its results are kept or
    removed whole); `group` then names the group's first and last seq, so cut before the first or at the
    last.

    Args:
        session_id (int):
        to_seq (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SnapshotDiff]
    """

    kwargs = _get_kwargs(
        session_id=session_id,
        to_seq=to_seq,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    session_id: int,
    *,
    client: AuthenticatedClient,
    to_seq: int,
) -> Problem | SnapshotDiff | None:
    """Preview a rewind: the messages and facts it would remove; nothing changes

     409 when the seq is not a live message of the session (never stored, trimmed, or removed by a
    rollback or rewind) or cutting there would split a tool group (a call and its results are kept or
    removed whole); `group` then names the group's first and last seq, so cut before the first or at the
    last.

    Args:
        session_id (int):
        to_seq (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SnapshotDiff
    """

    return (
        await asyncio_detailed(
            session_id=session_id,
            client=client,
            to_seq=to_seq,
        )
    ).parsed
