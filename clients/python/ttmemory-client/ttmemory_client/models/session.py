from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="Session")


@_attrs_define
class Session:
    """A session's counters (what an append answers with).

    Attributes:
        id (int):
        key (str):
        message_count (int):
        expires_at (datetime.datetime | None): When the session expires unless written to again (its last write plus the
            namespace's session lifetime); null: kept forever. See docs/retention.md.
        metadata (Any | Unset): Stored in clear; no content.
        token_count (int | Unset):
        last_seq (int | Unset):
        parent (int | None | Unset): The session this one was forked from (session_fork, session_edit).
        forked_at_seq (int | None | Unset): The parent's last seq copied into this fork.
        created_at (datetime.datetime | Unset):
        updated_at (datetime.datetime | Unset):
    """

    id: int
    key: str
    message_count: int
    expires_at: datetime.datetime | None
    metadata: Any | Unset = UNSET
    token_count: int | Unset = UNSET
    last_seq: int | Unset = UNSET
    parent: int | None | Unset = UNSET
    forked_at_seq: int | None | Unset = UNSET
    created_at: datetime.datetime | Unset = UNSET
    updated_at: datetime.datetime | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        key = self.key

        message_count = self.message_count

        expires_at: None | str
        if isinstance(self.expires_at, datetime.datetime):
            expires_at = self.expires_at.isoformat()
        else:
            expires_at = self.expires_at

        metadata = self.metadata

        token_count = self.token_count

        last_seq = self.last_seq

        parent: int | None | Unset
        if isinstance(self.parent, Unset):
            parent = UNSET
        else:
            parent = self.parent

        forked_at_seq: int | None | Unset
        if isinstance(self.forked_at_seq, Unset):
            forked_at_seq = UNSET
        else:
            forked_at_seq = self.forked_at_seq

        created_at: str | Unset = UNSET
        if not isinstance(self.created_at, Unset):
            created_at = self.created_at.isoformat()

        updated_at: str | Unset = UNSET
        if not isinstance(self.updated_at, Unset):
            updated_at = self.updated_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "key": key,
                "message_count": message_count,
                "expires_at": expires_at,
            }
        )
        if metadata is not UNSET:
            field_dict["metadata"] = metadata
        if token_count is not UNSET:
            field_dict["token_count"] = token_count
        if last_seq is not UNSET:
            field_dict["last_seq"] = last_seq
        if parent is not UNSET:
            field_dict["parent"] = parent
        if forked_at_seq is not UNSET:
            field_dict["forked_at_seq"] = forked_at_seq
        if created_at is not UNSET:
            field_dict["created_at"] = created_at
        if updated_at is not UNSET:
            field_dict["updated_at"] = updated_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        key = d.pop("key")

        message_count = d.pop("message_count")

        def _parse_expires_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                expires_at_type_0 = datetime.datetime.fromisoformat(data)

                return expires_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        expires_at = _parse_expires_at(d.pop("expires_at"))

        metadata = d.pop("metadata", UNSET)

        token_count = d.pop("token_count", UNSET)

        last_seq = d.pop("last_seq", UNSET)

        def _parse_parent(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        parent = _parse_parent(d.pop("parent", UNSET))

        def _parse_forked_at_seq(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        forked_at_seq = _parse_forked_at_seq(d.pop("forked_at_seq", UNSET))

        _created_at = d.pop("created_at", UNSET)
        created_at: datetime.datetime | Unset
        if isinstance(_created_at, Unset):
            created_at = UNSET
        else:
            created_at = datetime.datetime.fromisoformat(_created_at)

        _updated_at = d.pop("updated_at", UNSET)
        updated_at: datetime.datetime | Unset
        if isinstance(_updated_at, Unset):
            updated_at = UNSET
        else:
            updated_at = datetime.datetime.fromisoformat(_updated_at)

        session = cls(
            id=id,
            key=key,
            message_count=message_count,
            expires_at=expires_at,
            metadata=metadata,
            token_count=token_count,
            last_seq=last_seq,
            parent=parent,
            forked_at_seq=forked_at_seq,
            created_at=created_at,
            updated_at=updated_at,
        )

        session.additional_properties = d
        return session

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
