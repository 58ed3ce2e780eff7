from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.blank_enum import BlankEnum, check_blank_enum
from ..models.session_expiry_enum import SessionExpiryEnum, check_session_expiry_enum
from ..types import UNSET, Unset

T = TypeVar("T", bound="RetentionPolicy")


@_attrs_define
class RetentionPolicy:
    """The namespace's own lifetimes, in seconds: null inherits the setting, 0 keeps forever.

    Attributes:
        session_ttl (float | None | Unset):
        session_expiry (BlankEnum | SessionExpiryEnum | Unset):
        archived_message_ttl (float | None | Unset):
        snapshot_ttl (float | None | Unset):
        ledger_ttl (float | None | Unset):
    """

    session_ttl: float | None | Unset = UNSET
    session_expiry: BlankEnum | SessionExpiryEnum | Unset = UNSET
    archived_message_ttl: float | None | Unset = UNSET
    snapshot_ttl: float | None | Unset = UNSET
    ledger_ttl: float | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        session_ttl: float | None | Unset
        if isinstance(self.session_ttl, Unset):
            session_ttl = UNSET
        else:
            session_ttl = self.session_ttl

        session_expiry: str | Unset
        if isinstance(self.session_expiry, Unset):
            session_expiry = UNSET
        elif isinstance(self.session_expiry, str):
            session_expiry = self.session_expiry
        else:
            session_expiry = self.session_expiry

        archived_message_ttl: float | None | Unset
        if isinstance(self.archived_message_ttl, Unset):
            archived_message_ttl = UNSET
        else:
            archived_message_ttl = self.archived_message_ttl

        snapshot_ttl: float | None | Unset
        if isinstance(self.snapshot_ttl, Unset):
            snapshot_ttl = UNSET
        else:
            snapshot_ttl = self.snapshot_ttl

        ledger_ttl: float | None | Unset
        if isinstance(self.ledger_ttl, Unset):
            ledger_ttl = UNSET
        else:
            ledger_ttl = self.ledger_ttl

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if session_ttl is not UNSET:
            field_dict["session_ttl"] = session_ttl
        if session_expiry is not UNSET:
            field_dict["session_expiry"] = session_expiry
        if archived_message_ttl is not UNSET:
            field_dict["archived_message_ttl"] = archived_message_ttl
        if snapshot_ttl is not UNSET:
            field_dict["snapshot_ttl"] = snapshot_ttl
        if ledger_ttl is not UNSET:
            field_dict["ledger_ttl"] = ledger_ttl

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_session_ttl(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        session_ttl = _parse_session_ttl(d.pop("session_ttl", UNSET))

        def _parse_session_expiry(data: object) -> BlankEnum | SessionExpiryEnum | Unset:
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                session_expiry_type_0 = check_session_expiry_enum(data)

                return session_expiry_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, str):
                raise TypeError()
            session_expiry_type_1 = check_blank_enum(data)

            return session_expiry_type_1

        session_expiry = _parse_session_expiry(d.pop("session_expiry", UNSET))

        def _parse_archived_message_ttl(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        archived_message_ttl = _parse_archived_message_ttl(d.pop("archived_message_ttl", UNSET))

        def _parse_snapshot_ttl(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        snapshot_ttl = _parse_snapshot_ttl(d.pop("snapshot_ttl", UNSET))

        def _parse_ledger_ttl(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        ledger_ttl = _parse_ledger_ttl(d.pop("ledger_ttl", UNSET))

        retention_policy = cls(
            session_ttl=session_ttl,
            session_expiry=session_expiry,
            archived_message_ttl=archived_message_ttl,
            snapshot_ttl=snapshot_ttl,
            ledger_ttl=ledger_ttl,
        )

        retention_policy.additional_properties = d
        return retention_policy

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
