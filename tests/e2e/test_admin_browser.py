"""The admin console in real headless Chromium: log in, open a conversation, reveal it, roll it
back through the confirmation page, see the transcript change, undo, rewind from a transcript
message and undo that too, and find it all audited.

Drives Debian's ``chromium`` (``/usr/bin/chromium``; ``./dev test`` installs it) through
Playwright against pytest-django's live server. No browser is downloaded. Screenshots of every
step go to ``.data/artifacts/e2e/``.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import django.contrib.admin
import pytest
from django.contrib.auth.models import Permission

from tests.conftest import assistant, tool_call, tool_result, user
from ttmemory import memory
from ttmemory.models import AuditEntry, Message

CHROMIUM = Path(os.environ.get("TTMEMORY_E2E_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = Path(__file__).resolve().parents[2] / ".data" / "artifacts" / "e2e"
ADMIN_STATIC = Path(django.contrib.admin.__file__).parent / "static"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PASSWORD = "correct horse battery staple"
BAD_TEXT = "I booked you a flight to Paris instead."
GOOD_TEXT = "Sunny in Lisbon tomorrow, 24 degrees."
SUPPORT_PERMS = [
    "view_memorysession",
    "view_snapshot",
    "view_fact",
    "view_auditentry",
    "rollback_memorysession",
    "reveal_content",
]

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason=f"{CHROMIUM} is missing: install Debian's chromium (./dev test does) to run this test",
)


def serve_admin_static(route: Any) -> None:
    """The test settings have no staticfiles app: the browser gets the admin's CSS from disk."""
    relative = urlparse(route.request.url).path.removeprefix("/static/")
    target = (ADMIN_STATIC / relative).resolve()
    if target.is_file() and ADMIN_STATIC in target.parents:
        route.fulfill(path=str(target))
    else:
        route.fulfill(status=404, body="not found")


@pytest.fixture
def browser_page(live_server: Any, settings: Any, monkeypatch: Any) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the ORM calls of the test are
    # still plain synchronous calls.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    settings.STATIC_URL = "/static/"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory(prefix="ttmemory-e2e-") as profile,
        sync_playwright() as playwright,
    ):
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900},
        )
        try:
            page = context.new_page()
            page.set_default_timeout(20_000)
            page.route(f"{live_server.url}/static/**", serve_admin_static)
            yield page
        finally:
            context.close()


def shot(page: Any, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def test_support_agent_rolls_back_a_bad_turn_and_undoes_it(
    browser_page: Any, live_server: Any, transactional_db: Any, django_user_model: Any
) -> None:
    from playwright.sync_api import expect

    page = browser_page
    agent = django_user_model.objects.create_user(username="sam", password=PASSWORD, is_staff=True)
    agent.user_permissions.add(
        *Permission.objects.filter(content_type__app_label="ttmemory", codename__in=SUPPORT_PERMS)
    )
    session = memory.session_open(namespace="user-42", key="lisbon-trip")
    memory.message_add_many(
        session=session,
        messages=[
            {"role": "system", "content": "You are a travel assistant."},
            user("What is the weather in Lisbon tomorrow?"),
            tool_call(["call_weather"], name="get_weather"),
            tool_result("call_weather", '{"forecast": "sunny", "high_c": 24}'),
            assistant(GOOD_TEXT),
        ],
    )
    good = memory.snapshot_create(session=session, label="before booking")
    memory.message_add_many(session=session, messages=[user("Book Lisbon."), assistant(BAD_TEXT)])

    # Log in.
    page.goto(f"{live_server.url}/admin/")
    page.fill("#id_username", "sam")
    page.fill("#id_password", PASSWORD)
    shot(page, "01-login")
    page.click("input[type=submit]")
    expect(page.locator("#user-tools")).to_contain_text("sam")

    # Find the user's conversation by namespace.
    page.click("text=Memory sessions")
    page.fill("#searchbar", "user-42")
    page.press("#searchbar", "Enter")
    expect(page.locator("#result_list")).to_contain_text("lisbon-trip")
    shot(page, "02-sessions")
    page.click("#result_list >> text=lisbon-trip")

    # The transcript is masked until revealed, with a reason.
    chat = page.locator("#transcript + p + .ttm-chat")
    expect(chat).to_contain_text(f"\u2022\u2022\u2022 {len(BAD_TEXT)} characters")
    expect(chat).not_to_contain_text(BAD_TEXT)
    shot(page, "03-session-masked")
    page.click("a.ttm-reveal-link")
    page.fill("#id_reason", "Ticket 4711: customer says the agent booked the wrong city")
    shot(page, "04-reveal-reason")
    page.click("#reveal-form input[type=submit]")
    expect(chat).to_contain_text(BAD_TEXT)
    expect(chat).to_contain_text(GOOD_TEXT)
    call = page.locator('details[data-call="call_weather"]')
    call.locator("summary").click()
    expect(call).to_contain_text('"forecast": "sunny"')
    shot(page, "05-session-revealed")

    # Roll back through the confirmation page.
    page.click(f'#snapshot-timeline tr[data-snapshot="{good.pk}"] a.ttm-rollback-link')
    expect(page.locator("#rollback-preview-summary")).to_contain_text("2 messages will be removed")
    expect(page.locator("#removed + .ttm-chat")).to_contain_text(BAD_TEXT)
    page.fill("#id_reason", "Ticket 4711: remove the wrong booking")
    shot(page, "06-rollback-preview")
    page.click("#rollback-form input[type=submit]")

    expect(page.locator(".messagelist")).to_contain_text("Rolled back user-42/lisbon-trip")
    expect(chat).not_to_contain_text(BAD_TEXT)
    expect(chat).to_contain_text(GOOD_TEXT)
    shot(page, "07-rolled-back")
    assert not Message.objects.filter(session=session, seq=7).exists()

    # Undo it from the link in the message.
    page.click("a.ttm-undo-link")
    expect(page.locator("#rollback-preview-summary")).to_contain_text("2 messages will be restored")
    page.fill("#id_reason", "Ticket 4711: customer wants it back after all")
    shot(page, "08-undo-preview")
    page.click("#rollback-form input[type=submit]")
    expect(page.locator(".messagelist")).to_contain_text("Undid the rollback")
    expect(chat).to_contain_text(BAD_TEXT)
    shot(page, "09-undone")
    assert Message.objects.live().filter(session=session, seq=7).exists()

    # Rewind from a transcript message, no snapshot needed: back to the good answer (#5).
    page.click("#msg-5 a.ttm-rewind-link")
    expect(page.locator("#rewind-preview-summary")).to_contain_text("2 messages will be removed")
    expect(page.locator("#removed + .ttm-chat")).to_contain_text(BAD_TEXT)
    page.fill("#id_reason", "Ticket 4712: the booking turn again")
    shot(page, "10-rewind-preview")
    page.click("#rewind-form input[type=submit]")
    expect(page.locator(".messagelist")).to_contain_text("Rewound user-42/lisbon-trip")
    # Archived (TRIM_MODE "archive"), so still shown to support staff, marked as rewound.
    rewound = page.locator("#msg-7")
    expect(rewound).to_have_class(re.compile(r"\bttm-archived\b"))
    expect(rewound).to_contain_text("removed by a rewind")
    expect(page.locator("#msg-5")).not_to_have_class(re.compile(r"\bttm-archived\b"))
    shot(page, "11-rewound")
    assert not Message.objects.live().filter(session=session, seq=7).exists()

    # And undo the rewind from the link in the message, like a rollback.
    page.click("a.ttm-undo-link")
    expect(page.locator("#rollback-preview-summary")).to_contain_text("2 messages will be restored")
    page.fill("#id_reason", "Ticket 4712: keep it after all")
    page.click("#rollback-form input[type=submit]")
    expect(page.locator(".messagelist")).to_contain_text("Undid the rollback")
    expect(page.locator("#msg-7")).not_to_have_class(re.compile(r"\bttm-archived\b"))
    expect(chat).to_contain_text(BAD_TEXT)
    shot(page, "12-rewind-undone")
    assert Message.objects.live().filter(session=session, seq=7).exists()

    # Every step is in the audit log.
    page.goto(f"{live_server.url}/admin/ttmemory/auditentry/")
    rows = page.locator("#result_list tbody tr")
    expect(rows).to_have_count(5)
    expect(page.locator("#result_list")).to_contain_text("Ticket 4711: remove the wrong booking")
    expect(page.locator("#result_list")).to_contain_text("Ticket 4712: the booking turn again")
    shot(page, "13-audit-log")
    actions = list(AuditEntry.objects.order_by("pk").values_list("action", "actor"))
    assert actions == [
        ("reveal", "sam"),
        ("rollback", "sam"),
        ("undo", "sam"),
        ("rewind", "sam"),
        ("undo", "sam"),
    ]
