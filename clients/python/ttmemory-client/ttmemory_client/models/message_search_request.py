from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="MessageSearchRequest")


@_attrs_define
class MessageSearchRequest:
    """
    Attributes:
        query (str):
        k (int | Unset):  Default: 10.
        window (int | Unset): Neighbouring messages each side. Default: 2.
        sessions (list[str] | Unset): Session keys to search (default: every session of the namespace).
    """

    query: str
    k: int | Unset = 10
    window: int | Unset = 2
    sessions: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        query = self.query

        k = self.k

        window = self.window

        sessions: list[str] | Unset = UNSET
        if not isinstance(self.sessions, Unset):
            sessions = self.sessions

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "query": query,
            }
        )
        if k is not UNSET:
            field_dict["k"] = k
        if window is not UNSET:
            field_dict["window"] = window
        if sessions is not UNSET:
            field_dict["sessions"] = sessions

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        query = d.pop("query")

        k = d.pop("k", UNSET)

        window = d.pop("window", UNSET)

        sessions = cast(list[str], d.pop("sessions", UNSET))

        message_search_request = cls(
            query=query,
            k=k,
            window=window,
            sessions=sessions,
        )

        message_search_request.additional_properties = d
        return message_search_request

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
