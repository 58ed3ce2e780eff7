"""The example of docs/integrations/langgraph.md runs as written and prints what it says."""

from __future__ import annotations

import contextlib
import gc
import io
import re
from pathlib import Path
from typing import Any

DOC = Path(__file__).resolve().parents[3] / "docs" / "integrations" / "langgraph.md"


def test_the_documented_example_runs(transactional_db: Any) -> None:
    text = DOC.read_text()
    block = re.search(r"<!-- example: langgraph -->\n```python\n(.*?)```", text, re.S)
    assert block is not None
    code = block.group(1)
    assert len(code.strip().splitlines()) <= 30
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(DOC), "exec", dont_inherit=True), {"__name__": "langgraph_example"})
    gc.collect()  # the LangGraph worker threads' connections
    assert printed.getvalue().splitlines() == [
        "['Ada prefers green tea', 'Ada lives in Porto']",
        "{'text': 'Ada prefers green tea'}",
    ]
