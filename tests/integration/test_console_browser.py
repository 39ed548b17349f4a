"""The web console in a real browser: Debian's Chromium driven by Playwright (no browser
download), against the real API, Kafka, Weaviate and a worker on the deterministic LM server.

``FACTSTREAM_SCREENSHOTS=DIR`` keeps the screenshots there (``make screenshots`` writes
docs/console/); otherwise they go to the test's temporary folder.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from fixtures.api_server import serving
from fixtures.decisions import Decisions
from fixtures.stack import StackFactory
from playwright.async_api import Browser, Page, async_playwright, expect

from factstream.access import hash_key
from factstream.api.app import create_app
from factstream.clients import open_clients
from factstream.topics.records import Document

CHROMIUM = Path("/usr/bin/chromium")  # deploy/local/require-tools.sh installs it
T0 = datetime(2024, 3, 1, tzinfo=UTC)
HOME = "Mike Lawler lives in Pearl River."
MOVED = "Mike Lawler lives in Albany."
HIDDEN = "The secret base is in Oslo."
ANSWER = "He lives in Pearl River, New York, with his family"
KEYS = {"desk-key": {"read": ["desk"], "publish": ["desk"]}}

expect.set_options(timeout=30_000)  # the overview reads three topics; the worker edits


def _doc(ns: str, marker: str, text: str, day: int) -> dict[str, Any]:
    """A document whose text carries ``[marker]``, the stub's key for its decisions."""
    when = T0 + timedelta(days=day)
    document = Document(id=marker, namespace=ns, kind="article", timestamp=when, text=text)
    return document.model_copy(update={"text": f"[{marker}] {text}"}).model_dump(mode="json")


def _shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("FACTSTREAM_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


async def _login(browser: Browser, url: str, path: str) -> Page:
    page = await browser.new_page(viewport={"width": 1280, "height": 860})
    await page.goto(f"{url}{path}")
    await page.get_by_label("API key").fill("desk-key")
    await page.get_by_label("API key").press("Enter")  # the keyboard logs in
    await expect(page.get_by_label("Namespace")).to_have_value("desk")
    assert "desk-key" not in page.url
    return page


async def _streamed_answer(page: Page) -> tuple[list[str], int]:
    """The answer texts seen while the answer streamed in, and the tokens counted."""
    answer = page.locator("#answer")
    seen: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = await answer.text_content() or ""
        if not seen or seen[-1] != text:
            seen.append(text)
        if await answer.get_attribute("aria-busy") == "false" and text == ANSWER:
            break
        await asyncio.sleep(0.03)
    return seen, int(await answer.get_attribute("data-tokens") or 0)


async def test_log_in_ask_watch_a_fact_change_and_be_refused(
    stack_factory: StackFactory, tmp_path: Path
) -> None:
    assert CHROMIUM.exists(), "Debian's chromium is missing: make tools installs it"
    decisions = Decisions(
        extract={"doc-1": [HOME], "doc-o": [HIDDEN]}, answers={"Where does": ANSWER}
    )
    env = {"FACTSTREAM_API_KEYS": json.dumps({hash_key(k): v for k, v in KEYS.items()})}
    # 60 ms between streamed words: slow enough to watch the answer grow.
    stack = await stack_factory(decisions, stub_args=("--stream-delay", "60"), **env)
    stack.start_worker()
    await stack.publish(
        [
            _doc("desk", "doc-1", "Mike Lawler lives in Pearl River.", 0),
            _doc("other", "doc-o", "A secret.", 0),
        ]
    )
    await stack.wait_outcomes(2)
    shots = _shots(tmp_path)
    async with (
        open_clients(stack.settings) as clients,
        serving(create_app(stack.settings, clients=clients)) as url,
        async_playwright() as playwright,
    ):
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            page = await _login(browser, url, "/ui")
            picker = page.get_by_label("Namespace")
            assert await picker.locator("option").all_text_contents() == ["desk"]  # not other

            # Ask: the answer grows token by token, then the cited facts with their histories.
            await page.get_by_label("Question").fill("Where does Mike Lawler live?")
            await page.get_by_role("button", name="Ask").click()
            seen, tokens = await _streamed_answer(page)
            assert seen[-1] == ANSWER
            partial = [t for t in seen if t and t != ANSWER]
            assert len(partial) >= 2 and all(ANSWER.startswith(t) for t in partial), seen
            assert tokens > len(ANSWER.split())
            cited = page.locator("#cited > li")
            await expect(cited).to_have_count(1)
            await expect(cited.first).to_contain_text(HOME)
            await expect(cited.first.locator(".history li")).to_contain_text("document doc-1")
            await page.screenshot(path=shots / "ask.png", full_page=True)

            # The fact page: one true span; a feed open in another tab.
            await cited.first.get_by_role("link", name=HOME).click()
            timeline = page.locator("svg.timeline")
            await expect(timeline).to_be_visible()
            await expect(timeline.locator("rect.span.true")).to_have_count(1)
            await expect(timeline.locator("rect.span.false")).to_have_count(0)
            feed = await _login(browser, url, "/ui/feed")
            await expect(feed.locator("#feed")).to_have_attribute("data-ready", "true")

            # A superseding document: the fact becomes false, rewritten as another.
            decisions.false = {"lives in Pearl River": MOVED}
            stack.decide(decisions)
            await stack.publish([_doc("desk", "doc-2", "Mike Lawler moved to Albany.", 30)])
            await stack.wait_outcomes(3)
            await expect(feed.locator("#feed li.op-rewrite")).to_contain_text(MOVED)

            await page.get_by_role("button", name="Show").click()  # the fact page again
            await expect(timeline.locator("rect.span.false")).to_have_count(1)
            await expect(timeline.locator("rect.span.true")).to_have_count(1)
            changes = page.locator("table.changes tbody tr")
            await expect(changes).to_have_count(2)
            await expect(changes.nth(1)).to_contain_text("doc-2")
            await page.screenshot(path=shots / "fact.png", full_page=True)
            await page.get_by_role("link", name="the fact that replaced it").click()
            await expect(page.locator(".fact-text")).to_have_text(MOVED)
            await expect(page.get_by_role("link", name="the fact it replaced")).to_be_visible()

            await feed.goto(f"{url}/ui/overview")  # same tab: the key is still there
            overview = feed.locator("#overview")
            await expect(overview).to_contain_text("1 facts false")
            await expect(overview.locator("table.by-op tbody tr")).to_have_count(2)
            await feed.screenshot(path=shots / "overview.png", full_page=True)

            # The document behind the change: its text and the edits it made.
            await feed.goto(f"{url}/ui/documents/doc-2?namespace=desk")
            document = feed.locator("#document")
            await expect(document).to_contain_text("Mike Lawler moved to Albany.")
            await expect(document.locator("li.op-rewrite")).to_contain_text(MOVED)

            # A namespace the key may not read: 403, shown.
            await page.goto(f"{url}/ui/facts?namespace=other")
            await expect(page.locator("#results .error")).to_contain_text("403 Forbidden")
            assert HIDDEN not in await page.content()
        finally:
            await browser.close()
