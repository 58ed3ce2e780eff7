from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="Trim")


@_attrs_define
class Trim:
    """
    Attributes:
        removed (int):
        removed_tokens (int):
        kept (int):
        kept_tokens (int):
        mode (str):
        removed_seqs (list[int]):
    """

    removed: int
    removed_tokens: int
    kept: int
    kept_tokens: int
    mode: str
    removed_seqs: list[int]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        removed = self.removed

        removed_tokens = self.removed_tokens

        kept = self.kept

        kept_tokens = self.kept_tokens

        mode = self.mode

        removed_seqs = self.removed_seqs

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "removed": removed,
                "removed_tokens": removed_tokens,
                "kept": kept,
                "kept_tokens": kept_tokens,
                "mode": mode,
                "removed_seqs": removed_seqs,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        removed = d.pop("removed")

        removed_tokens = d.pop("removed_tokens")

        kept = d.pop("kept")

        kept_tokens = d.pop("kept_tokens")

        mode = d.pop("mode")

        removed_seqs = cast(list[int], d.pop("removed_seqs"))

        trim = cls(
            removed=removed,
            removed_tokens=removed_tokens,
            kept=kept,
            kept_tokens=kept_tokens,
            mode=mode,
            removed_seqs=removed_seqs,
        )

        trim.additional_properties = d
        return trim

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
