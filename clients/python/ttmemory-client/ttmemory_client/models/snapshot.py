from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.kind_enum import KindEnum, check_kind_enum
from ..types import UNSET, Unset

T = TypeVar("T", bound="Snapshot")


@_attrs_define
class Snapshot:
    """
    Attributes:
        id (int):
        message_count (int):
        token_count (int):
        upto_seq (int): The session's last_seq when taken.
        label (str | Unset):
        kind (KindEnum | Unset): * `manual` - Manual
            * `safety` - Safety
            * `automatic` - Automatic
        created_at (datetime.datetime | Unset):
    """

    id: int
    message_count: int
    token_count: int
    upto_seq: int
    label: str | Unset = UNSET
    kind: KindEnum | Unset = UNSET
    created_at: datetime.datetime | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        message_count = self.message_count

        token_count = self.token_count

        upto_seq = self.upto_seq

        label = self.label

        kind: str | Unset = UNSET
        if not isinstance(self.kind, Unset):
            kind = self.kind

        created_at: str | Unset = UNSET
        if not isinstance(self.created_at, Unset):
            created_at = self.created_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "message_count": message_count,
                "token_count": token_count,
                "upto_seq": upto_seq,
            }
        )
        if label is not UNSET:
            field_dict["label"] = label
        if kind is not UNSET:
            field_dict["kind"] = kind
        if created_at is not UNSET:
            field_dict["created_at"] = created_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        message_count = d.pop("message_count")

        token_count = d.pop("token_count")

        upto_seq = d.pop("upto_seq")

        label = d.pop("label", UNSET)

        _kind = d.pop("kind", UNSET)
        kind: KindEnum | Unset
        if isinstance(_kind, Unset):
            kind = UNSET
        else:
            kind = check_kind_enum(_kind)

        _created_at = d.pop("created_at", UNSET)
        created_at: datetime.datetime | Unset
        if isinstance(_created_at, Unset):
            created_at = UNSET
        else:
            created_at = datetime.datetime.fromisoformat(_created_at)

        snapshot = cls(
            id=id,
            message_count=message_count,
            token_count=token_count,
            upto_seq=upto_seq,
            label=label,
            kind=kind,
            created_at=created_at,
        )

        snapshot.additional_properties = d
        return snapshot

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
