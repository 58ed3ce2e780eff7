from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.role_enum import RoleEnum, check_role_enum
from ..types import UNSET, Unset

T = TypeVar("T", bound="Message")


@_attrs_define
class Message:
    """
    Attributes:
        seq (int):
        role (RoleEnum): * `system` - System
            * `developer` - Developer
            * `user` - User
            * `assistant` - Assistant
            * `tool` - Tool
            * `function` - Function
        tokens (int):
        archived (bool):
        message (Any): Chat Completions message.
        created_at (datetime.datetime | Unset):
    """

    seq: int
    role: RoleEnum
    tokens: int
    archived: bool
    message: Any
    created_at: datetime.datetime | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        seq = self.seq

        role: str = self.role

        tokens = self.tokens

        archived = self.archived

        message = self.message

        created_at: str | Unset = UNSET
        if not isinstance(self.created_at, Unset):
            created_at = self.created_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "seq": seq,
                "role": role,
                "tokens": tokens,
                "archived": archived,
                "message": message,
            }
        )
        if created_at is not UNSET:
            field_dict["created_at"] = created_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        seq = d.pop("seq")

        role = check_role_enum(d.pop("role"))

        tokens = d.pop("tokens")

        archived = d.pop("archived")

        message = d.pop("message")

        _created_at = d.pop("created_at", UNSET)
        created_at: datetime.datetime | Unset
        if isinstance(_created_at, Unset):
            created_at = UNSET
        else:
            created_at = datetime.datetime.fromisoformat(_created_at)

        message = cls(
            seq=seq,
            role=role,
            tokens=tokens,
            archived=archived,
            message=message,
            created_at=created_at,
        )

        message.additional_properties = d
        return message

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
