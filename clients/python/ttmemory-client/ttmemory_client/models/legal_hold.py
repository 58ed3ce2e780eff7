from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="LegalHold")


@_attrs_define
class LegalHold:
    """
    Attributes:
        id (int):
        reason (str): Why (e.g. a case number).
        placed_by (str):
        placed_at (datetime.datetime):
        session (int | None | Unset): A session id; null or absent: the whole namespace.
    """

    id: int
    reason: str
    placed_by: str
    placed_at: datetime.datetime
    session: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        reason = self.reason

        placed_by = self.placed_by

        placed_at = self.placed_at.isoformat()

        session: int | None | Unset
        if isinstance(self.session, Unset):
            session = UNSET
        else:
            session = self.session

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "reason": reason,
                "placed_by": placed_by,
                "placed_at": placed_at,
            }
        )
        if session is not UNSET:
            field_dict["session"] = session

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        reason = d.pop("reason")

        placed_by = d.pop("placed_by")

        placed_at = datetime.datetime.fromisoformat(d.pop("placed_at"))

        def _parse_session(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        session = _parse_session(d.pop("session", UNSET))

        legal_hold = cls(
            id=id,
            reason=reason,
            placed_by=placed_by,
            placed_at=placed_at,
            session=session,
        )

        legal_hold.additional_properties = d
        return legal_hold

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
