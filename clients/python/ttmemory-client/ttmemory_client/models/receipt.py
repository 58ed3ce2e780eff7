from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.receipt_counts import ReceiptCounts
    from ..models.receipt_kept import ReceiptKept


T = TypeVar("T", bound="Receipt")


@_attrs_define
class Receipt:
    """
    Attributes:
        namespace (str):
        counts (ReceiptCounts):
        redis_keys (int):
        erased_at (str):
        total (int):
        kept (ReceiptKept): Rows that outlive the erase by design (the audit log: ids and counts only).
    """

    namespace: str
    counts: ReceiptCounts
    redis_keys: int
    erased_at: str
    total: int
    kept: ReceiptKept
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        namespace = self.namespace

        counts = self.counts.to_dict()

        redis_keys = self.redis_keys

        erased_at = self.erased_at

        total = self.total

        kept = self.kept.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "namespace": namespace,
                "counts": counts,
                "redis_keys": redis_keys,
                "erased_at": erased_at,
                "total": total,
                "kept": kept,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.receipt_counts import ReceiptCounts  # noqa: PLC0415
        from ..models.receipt_kept import ReceiptKept  # noqa: PLC0415

        d = dict(src_dict)
        namespace = d.pop("namespace")

        counts = ReceiptCounts.from_dict(d.pop("counts"))

        redis_keys = d.pop("redis_keys")

        erased_at = d.pop("erased_at")

        total = d.pop("total")

        kept = ReceiptKept.from_dict(d.pop("kept"))

        receipt = cls(
            namespace=namespace,
            counts=counts,
            redis_keys=redis_keys,
            erased_at=erased_at,
            total=total,
            kept=kept,
        )

        receipt.additional_properties = d
        return receipt

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
