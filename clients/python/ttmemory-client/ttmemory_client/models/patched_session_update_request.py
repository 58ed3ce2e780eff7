from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.patched_session_update_request_state import PatchedSessionUpdateRequestState


T = TypeVar("T", bound="PatchedSessionUpdateRequest")


@_attrs_define
class PatchedSessionUpdateRequest:
    """
    Attributes:
        state (PatchedSessionUpdateRequestState | Unset): Variables to merge; a null value removes one.
    """

    state: PatchedSessionUpdateRequestState | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        state: dict[str, Any] | Unset = UNSET
        if not isinstance(self.state, Unset):
            state = self.state.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if state is not UNSET:
            field_dict["state"] = state

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.patched_session_update_request_state import PatchedSessionUpdateRequestState  # noqa: PLC0415

        d = dict(src_dict)
        _state = d.pop("state", UNSET)
        state: PatchedSessionUpdateRequestState | Unset
        if isinstance(_state, Unset):
            state = UNSET
        else:
            state = PatchedSessionUpdateRequestState.from_dict(_state)

        patched_session_update_request = cls(
            state=state,
        )

        patched_session_update_request.additional_properties = d
        return patched_session_update_request

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
