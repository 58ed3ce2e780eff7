from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.legal_hold import LegalHold
    from ..models.retention_effective import RetentionEffective
    from ..models.retention_policy import RetentionPolicy


T = TypeVar("T", bound="Retention")


@_attrs_define
class Retention:
    """The lifetimes in force (seconds; null: kept forever), the namespace's own policy and its
    legal holds.

        Attributes:
            namespace (str):
            effective (RetentionEffective):
            policy (None | RetentionPolicy):
            holds (list[LegalHold]):
    """

    namespace: str
    effective: RetentionEffective
    policy: None | RetentionPolicy
    holds: list[LegalHold]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.retention_policy import RetentionPolicy  # noqa: PLC0415

        namespace = self.namespace

        effective = self.effective.to_dict()

        policy: dict[str, Any] | None
        if isinstance(self.policy, RetentionPolicy):
            policy = self.policy.to_dict()
        else:
            policy = self.policy

        holds = []
        for holds_item_data in self.holds:
            holds_item = holds_item_data.to_dict()
            holds.append(holds_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "namespace": namespace,
                "effective": effective,
                "policy": policy,
                "holds": holds,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.legal_hold import LegalHold  # noqa: PLC0415
        from ..models.retention_effective import RetentionEffective  # noqa: PLC0415
        from ..models.retention_policy import RetentionPolicy  # noqa: PLC0415

        d = dict(src_dict)
        namespace = d.pop("namespace")

        effective = RetentionEffective.from_dict(d.pop("effective"))

        def _parse_policy(data: object) -> None | RetentionPolicy:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                policy_type_1 = RetentionPolicy.from_dict(data)

                return policy_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RetentionPolicy, data)

        policy = _parse_policy(d.pop("policy"))

        holds = []
        _holds = d.pop("holds")
        for holds_item_data in _holds:
            holds_item = LegalHold.from_dict(holds_item_data)

            holds.append(holds_item)

        retention = cls(
            namespace=namespace,
            effective=effective,
            policy=policy,
            holds=holds,
        )

        retention.additional_properties = d
        return retention

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
