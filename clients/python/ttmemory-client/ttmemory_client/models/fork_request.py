from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="ForkRequest")


@_attrs_define
class ForkRequest:
    """
    Attributes:
        at_seq (int | None | Unset): Copy the live messages up to this seq (0: none; null: all of them).
        key (str | Unset): The fork's session key (default: the parent's key with a random suffix).
    """

    at_seq: int | None | Unset = UNSET
    key: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        at_seq: int | None | Unset
        if isinstance(self.at_seq, Unset):
            at_seq = UNSET
        else:
            at_seq = self.at_seq

        key = self.key

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if at_seq is not UNSET:
            field_dict["at_seq"] = at_seq
        if key is not UNSET:
            field_dict["key"] = key

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_at_seq(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        at_seq = _parse_at_seq(d.pop("at_seq", UNSET))

        key = d.pop("key", UNSET)

        fork_request = cls(
            at_seq=at_seq,
            key=key,
        )

        fork_request.additional_properties = d
        return fork_request

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
