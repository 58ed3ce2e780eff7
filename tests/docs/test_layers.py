"""The picture of the layers in docs/architecture.md is the one generated from the contract."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("layers", ROOT / "docs" / "hooks" / "layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_architecture_page_draws_the_layers_contract_as_it_is() -> None:
    layers = _generator()
    page = layers.PAGE.read_text()

    assert layers.page_with_picture(page) == page, "run ./dev layers"
    for box in ('L0["apps.py', 'L3["services/"]', 'L14["conf/'):
        assert box in page
