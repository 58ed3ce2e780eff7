from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="PromptRequest")


@_attrs_define
class PromptRequest:
    """
    Attributes:
        max_tokens (int):
        query (None | str | Unset): Default: last user turn.
        memories (int | Unset):  Default: 5.
    """

    max_tokens: int
    query: None | str | Unset = UNSET
    memories: int | Unset = 5
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        max_tokens = self.max_tokens

        query: None | str | Unset
        if isinstance(self.query, Unset):
            query = UNSET
        else:
            query = self.query

        memories = self.memories

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "max_tokens": max_tokens,
            }
        )
        if query is not UNSET:
            field_dict["query"] = query
        if memories is not UNSET:
            field_dict["memories"] = memories

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        max_tokens = d.pop("max_tokens")

        def _parse_query(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        query = _parse_query(d.pop("query", UNSET))

        memories = d.pop("memories", UNSET)

        prompt_request = cls(
            max_tokens=max_tokens,
            query=query,
            memories=memories,
        )

        prompt_request.additional_properties = d
        return prompt_request

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
