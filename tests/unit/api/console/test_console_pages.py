"""The web console's pages and fragments on in-memory doubles (no Kafka): what a key sees."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient
from fixtures.bitemporal import ASSEMBLY, CONGRESS, HOME, edit, lawler_edits

from factstream.access import Grant, KeyTable, hash_key
from factstream.api.app import create_app
from factstream.clients import Clients
from factstream.config import ApiSettings, Settings
from factstream.edit.materializer import Materializer
from factstream.embed.fake import HashingEmbedder
from factstream.lm.fake import ScriptedLM
from factstream.lm.tasks.runner import TaskRunner
from factstream.metrics import Metrics
from factstream.store.memory import InMemoryFactStore
from factstream.topics.records import EditOp, FactEdit, fact_id_for

KEYS = KeyTable(
    {
        hash_key("desk-key"): Grant(read=frozenset({"desk"})),
        hash_key("all-key"): Grant(read=frozenset({"*"})),
    }
)
DESK = {"Authorization": "Bearer desk-key"}


MOVED = datetime(2024, 1, 1, tzinfo=UTC)  # HOME made false by document d3


async def _store() -> InMemoryFactStore:
    store = InMemoryFactStore()
    materializer = Materializer(store, HashingEmbedder())
    for namespace in ("desk", "other"):
        for batch in lawler_edits(namespace):
            await materializer.apply(batch)
    home = fact_id_for("desk", "d1", 1)
    kept = edit("d3", 0, 1, EditOp.REINFORCE, HOME, MOVED, fact=home).model_dump()
    moved = FactEdit.model_validate({**kept, "op": EditOp.INVALIDATE, "truth": False})
    await materializer.apply([moved])
    return store


@pytest.fixture
def http() -> Iterator[TestClient]:
    store = asyncio.run(_store())
    lm = ScriptedLM()
    clients = Clients(Metrics.create(), store, HashingEmbedder(), lm, TaskRunner(lm))
    settings = Settings(api=ApiSettings(min_similarity=-1.0))
    with TestClient(create_app(settings, clients=clients, keys=KEYS)) as client:
        yield client


def test_pages_are_shells_with_labelled_controls_and_a_local_script(http: TestClient) -> None:
    for path in ("/ui", "/ui/facts", "/ui/facts/abc", "/ui/feed", "/ui/overview"):
        page = http.get(path)  # no key: a page holds no data
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        html = page.text
        assert '<script src="/ui/static/console.js" defer>' in html
        assert "http://" not in html and "https://" not in html  # nothing from elsewhere
        for control in re.findall(r'<(?:input|select)[^>]* id="([^"]+)"', html):
            assert f'<label for="{control}">' in html, (path, control)
    script = http.get("/ui/static/console.js")
    assert script.status_code == 200 and "sessionStorage" in script.text
    assert "Authorization" in script.text and "localStorage" not in script.text
    assert http.get("/ui/static/console.css").status_code == 200


def test_the_namespace_picker_lists_what_the_key_may_read(http: TestClient) -> None:
    desk = http.get("/ui/f/namespaces", headers=DESK)
    assert re.findall(r'<option value="([^"]*)"', desk.text) == ["desk"]
    every = http.get("/ui/f/namespaces", headers={"Authorization": "Bearer all-key"})
    assert re.findall(r'<option value="([^"]*)"', every.text) == ["desk", "other"]
    assert http.get("/ui/f/namespaces").status_code == 401


def test_fragments_refuse_a_namespace_the_key_may_not_read(http: TestClient) -> None:
    fact = fact_id_for("other", "d1", 1)
    for path in ("/ui/f/facts", f"/ui/f/facts/{fact}", "/ui/f/overview", "/ui/f/feed"):
        refused = http.get(path, params={"namespace": "other"}, headers=DESK)
        assert refused.status_code == 403, path
        assert "other" in refused.json()["detail"]


def test_fact_search_and_paging(http: TestClient) -> None:
    listed = http.get("/ui/f/facts", params={"namespace": "desk"}, headers=DESK)
    assert listed.status_code == 200
    assert ASSEMBLY in listed.text and CONGRESS in listed.text
    assert HOME not in listed.text  # false now
    with_false = http.get(
        "/ui/f/facts", params={"namespace": "desk", "include_false": "true"}, headers=DESK
    )
    assert HOME in with_false.text
    then = http.get(
        "/ui/f/facts", params={"namespace": "desk", "as_of": "2023-06-01T00:00:00Z"}, headers=DESK
    )
    assert HOME in then.text and CONGRESS not in then.text  # not yet learned
    searched = http.get("/ui/f/facts", params={"namespace": "desk", "q": "Assembly"}, headers=DESK)
    assert ASSEMBLY in searched.text and "Similarity" in searched.text


def test_paging_follows_the_cursor(http: TestClient) -> None:
    seen: list[str] = []
    params = {"namespace": "desk", "include_false": "true"}
    for _ in range(10):
        page = http.get("/ui/f/facts", params=params, headers=DESK).text
        seen += re.findall(r'href="/ui/facts/([^?"]+)\?', page)
        cursor = re.search(r'data-cursor="([^"]+)"', page)
        if cursor is None:
            break
        params = {**params, "cursor": cursor.group(1)}
    assert len(seen) == len(set(seen)) == 3


def test_the_fact_page_draws_the_timeline_with_links_both_ways(http: TestClient) -> None:
    home = fact_id_for("desk", "d1", 1)
    page = http.get(f"/ui/f/facts/{home}", params={"namespace": "desk"}, headers=DESK)
    assert page.status_code == 200, page.text
    html = page.text
    assert HOME in html and "<svg" in html
    assert html.count('class="span true"') == 1 and html.count('class="span false"') == 1
    assert 'href="/ui/documents/d1?namespace=desk#edit-' in html  # each change's document
    assert 'href="/ui/documents/d3?namespace=desk#edit-' in html
    then = http.get(
        f"/ui/f/facts/{home}",
        params={"namespace": "desk", "as_of": "2023-06-01T00:00:00Z"},
        headers=DESK,
    ).text
    assert 'class="span false"' not in then  # not yet known false then

    old, new = fact_id_for("desk", "d1", 0), fact_id_for("desk", "d2", 0)
    rewritten = http.get(f"/ui/f/facts/{old}", params={"namespace": "desk"}, headers=DESK).text
    assert f'href="/ui/facts/{new}?namespace=desk"' in rewritten  # rewritten as
    assert 'class="valid"' in rewritten and "2021-01-01 to 2023-01-03" in rewritten
    back = http.get(f"/ui/f/facts/{new}", params={"namespace": "desk"}, headers=DESK).text
    assert f'href="/ui/facts/{old}?namespace=desk"' in back  # rewrites
    missing = http.get("/ui/f/facts/nope", params={"namespace": "desk"}, headers=DESK)
    assert missing.status_code == 404
