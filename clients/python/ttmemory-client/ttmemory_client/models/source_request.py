from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="SourceRequest")


@_attrs_define
class SourceRequest:
    """
    Attributes:
        session (int):
        seqs (list[int] | Unset): Seqs of messages of that session the fact came from.
    """

    session: int
    seqs: list[int] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        session = self.session

        seqs: list[int] | Unset = UNSET
        if not isinstance(self.seqs, Unset):
            seqs = self.seqs

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "session": session,
            }
        )
        if seqs is not UNSET:
            field_dict["seqs"] = seqs

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        session = d.pop("session")

        seqs = cast(list[int], d.pop("seqs", UNSET))

        source_request = cls(
            session=session,
            seqs=seqs,
        )

        source_request.additional_properties = d
        return source_request

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
