from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.status_enum import StatusEnum, check_status_enum
from ..types import UNSET, Unset

T = TypeVar("T", bound="LearnJob")


@_attrs_define
class LearnJob:
    """
    Attributes:
        id (UUID):
        status (StatusEnum | Unset): * `queued` - Queued
            * `running` - Running
            * `done` - Done
            * `failed` - Failed
        session (int | None | Unset):
        upto_seq (int | Unset):
        changes (Any | Unset): Action -> count.
        fact_ids (Any | Unset):
        error (str | Unset):
        created_at (datetime.datetime | Unset):
        finished_at (datetime.datetime | None | Unset):
    """

    id: UUID
    status: StatusEnum | Unset = UNSET
    session: int | None | Unset = UNSET
    upto_seq: int | Unset = UNSET
    changes: Any | Unset = UNSET
    fact_ids: Any | Unset = UNSET
    error: str | Unset = UNSET
    created_at: datetime.datetime | Unset = UNSET
    finished_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        status: str | Unset = UNSET
        if not isinstance(self.status, Unset):
            status = self.status

        session: int | None | Unset
        if isinstance(self.session, Unset):
            session = UNSET
        else:
            session = self.session

        upto_seq = self.upto_seq

        changes = self.changes

        fact_ids = self.fact_ids

        error = self.error

        created_at: str | Unset = UNSET
        if not isinstance(self.created_at, Unset):
            created_at = self.created_at.isoformat()

        finished_at: None | str | Unset
        if isinstance(self.finished_at, Unset):
            finished_at = UNSET
        elif isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
            }
        )
        if status is not UNSET:
            field_dict["status"] = status
        if session is not UNSET:
            field_dict["session"] = session
        if upto_seq is not UNSET:
            field_dict["upto_seq"] = upto_seq
        if changes is not UNSET:
            field_dict["changes"] = changes
        if fact_ids is not UNSET:
            field_dict["fact_ids"] = fact_ids
        if error is not UNSET:
            field_dict["error"] = error
        if created_at is not UNSET:
            field_dict["created_at"] = created_at
        if finished_at is not UNSET:
            field_dict["finished_at"] = finished_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = UUID(d.pop("id"))

        _status = d.pop("status", UNSET)
        status: StatusEnum | Unset
        if isinstance(_status, Unset):
            status = UNSET
        else:
            status = check_status_enum(_status)

        def _parse_session(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        session = _parse_session(d.pop("session", UNSET))

        upto_seq = d.pop("upto_seq", UNSET)

        changes = d.pop("changes", UNSET)

        fact_ids = d.pop("fact_ids", UNSET)

        error = d.pop("error", UNSET)

        _created_at = d.pop("created_at", UNSET)
        created_at: datetime.datetime | Unset
        if isinstance(_created_at, Unset):
            created_at = UNSET
        else:
            created_at = datetime.datetime.fromisoformat(_created_at)

        def _parse_finished_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                finished_at_type_0 = datetime.datetime.fromisoformat(data)

                return finished_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        finished_at = _parse_finished_at(d.pop("finished_at", UNSET))

        learn_job = cls(
            id=id,
            status=status,
            session=session,
            upto_seq=upto_seq,
            changes=changes,
            fact_ids=fact_ids,
            error=error,
            created_at=created_at,
            finished_at=finished_at,
        )

        learn_job.additional_properties = d
        return learn_job

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
