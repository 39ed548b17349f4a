"""Bitemporal reads over HTTP: as_of (belief) and valid_at / valid_between (the world).

The app runs on in-memory doubles (memory store, hashing embedder, scripted LM) holding
fixtures/bitemporal.py's knowledge base: Lawler in the Assembly until 2023-01-03, a
representative since, learned on 2023-09-01.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from fixtures.bitemporal import ASSEMBLY, CONGRESS, HOME, lawler_store

from factstream.access import KeyTable
from factstream.api.app import create_app
from factstream.clients import Clients
from factstream.config import ApiSettings, Settings
from factstream.embed.fake import HashingEmbedder
from factstream.lm.fake import ScriptedLM
from factstream.lm.tasks.runner import TaskRunner
from factstream.metrics import Metrics

REPLY = '{"reasoning": "from the facts", "answer": "an answer"}'
POSITION = "What is Mike Lawler's position?"


@pytest.fixture
def http() -> Iterator[TestClient]:
    store = asyncio.run(lawler_store())
    lm = ScriptedLM([REPLY] * 50)
    clients = Clients(Metrics.create(), store, HashingEmbedder(), lm, TaskRunner(lm))
    settings = Settings(api=ApiSettings(min_similarity=-1.0))
    app = create_app(settings, clients=clients, keys=KeyTable(open_access=True))
    with TestClient(app) as client:
        yield client


def ask(http: TestClient, **body: Any) -> dict[str, Any]:
    response = http.post("/v1/ask", json={"question": POSITION, "namespace": "desk", **body})
    assert response.status_code == 200, response.text
    reply: dict[str, Any] = response.json()
    return reply


def texts(reply: dict[str, Any]) -> set[str]:
    return {f["text"] for f in reply["facts"]}


def by_text(reply: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["text"]: f for f in reply["facts"]}


def test_valid_at_keeps_the_facts_that_held_then(http: TestClient) -> None:
    then = ask(http, valid_at="2022-06-01T00:00:00Z")
    assert texts(then) == {ASSEMBLY, HOME}
    assembly = by_text(then)[ASSEMBLY]
    assert (assembly["valid_from"], assembly["valid_to"]) == (
        "2021-01-01T00:00:00Z",
        "2023-01-03T00:00:00Z",
    )
    assert then["valid_time"] == {
        "start": "2022-06-01T00:00:00Z",
        "end": "2022-06-01T00:00:00.000001Z",
        "source": "request",
        "expression": None,
        "plan": None,
        "description": "at 2022-06-01",
    }
    later = ask(http, valid_at="2024-02-01T00:00:00+01:00")
    assert texts(later) == {CONGRESS, HOME}
    assert by_text(later)[CONGRESS]["valid_to"] is None


def test_valid_between_keeps_the_facts_that_overlap_it(http: TestClient) -> None:
    both = ask(http, valid_between={"start": "2022-12-01T00:00:00Z", "end": "2023-02-01T00:00:00Z"})
    assert texts(both) == {ASSEMBLY, CONGRESS, HOME}
    assert both["valid_time"]["description"] == "2022-12-01 to 2023-02-01"
    before = ask(http, valid_between={"end": "2021-01-01T00:00:00Z"})
    assert before["facts"] == [] and before["valid_time"]["description"] == "until 2021-01-01"
    everything = ask(http, valid_between={})  # open at both ends: no fact is left out
    assert texts(everything) == {ASSEMBLY, CONGRESS, HOME}


def test_the_questions_own_time_is_used_and_said(http: TestClient) -> None:
    reply = ask(http, question="What was Mike Lawler's position in 2022?")
    assert texts(reply) == {ASSEMBLY, HOME}
    assert reply["valid_time"] == {
        "start": "2022-01-01T00:00:00Z",
        "end": "2023-01-01T00:00:00Z",
        "source": "question",
        "expression": "in 2022",
        "plan": None,
        "description": '"in 2022" = 2022-01-01 to 2023-01-01',
    }
    now = ask(http)  # no time anywhere: what still holds now
    assert texts(now) == {CONGRESS, HOME} and now["valid_time"]["source"] == "current"
    assert now["valid_time"]["end"] is None


def test_an_explicit_valid_time_overrides_the_questions(http: TestClient) -> None:
    question = "What was Mike Lawler's position in 2022?"
    reply = ask(http, question=question, valid_at="2024-02-01T00:00:00Z")
    assert texts(reply) == {CONGRESS, HOME}
    assert reply["valid_time"]["source"] == "request"
    assert reply["valid_time"]["expression"] is None


def test_as_of_and_valid_at_together_read_what_was_believed_of_then(http: TestClient) -> None:
    """On 2023-03-01 Lawler was a representative; on 2023-06-01 nobody knew it yet."""
    known_now = ask(http, valid_at="2023-03-01T00:00:00Z")
    assert texts(known_now) == {CONGRESS, HOME}
    believed = ask(http, valid_at="2023-03-01T00:00:00Z", as_of="2023-06-01T00:00:00Z")
    assert texts(believed) == {ASSEMBLY, HOME}
    # The Assembly seat's end was set by the news of 2023-09-01: not known at as_of.
    assert by_text(believed)[ASSEMBLY]["valid_to"] is None
    assert believed["as_of"] == "2023-06-01T00:00:00Z"
    # Relative times in the question are read against as_of, not the clock.
    last_year = ask(http, question="Lawler's position last year?", as_of="2023-06-01T00:00:00Z")
    assert last_year["valid_time"]["expression"] == "last year"
    assert last_year["valid_time"]["start"] == "2022-01-01T00:00:00Z"


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (
            {
                "valid_at": "2022-01-01T00:00:00Z",
                "valid_between": {"start": "2021-01-01T00:00:00Z"},
            },
            "give valid_at or valid_between, not both",
        ),
        (
            {"valid_between": {"start": "2022-01-01T00:00:00Z", "end": "2021-01-01T00:00:00Z"}},
            "is not before end",
        ),
        (
            {"valid_between": {"start": "2022-01-01T00:00:00Z", "end": "2022-01-01T00:00:00Z"}},
            "is not before end",
        ),
        ({"valid_at": "2022-01-01T00:00:00"}, "valid_at"),
        ({"valid_at": "last year"}, "valid_at"),
        ({"valid_between": {"start": "2022-01-01T00:00:00Z", "later": 1}}, "later"),
    ],
)
def test_a_bad_valid_time_is_a_clear_422(
    http: TestClient, extra: dict[str, Any], needle: str
) -> None:
    response = http.post("/v1/ask", json={"question": POSITION, "namespace": "desk", **extra})
    assert response.status_code == 422, response.text
    assert needle in response.text


def test_the_stream_says_the_valid_time_with_the_facts(http: TestClient) -> None:
    body = {"question": POSITION, "namespace": "desk", "stream": True}
    with http.stream("POST", "/v1/ask", json={**body, "valid_at": "2022-06-01T00:00:00Z"}) as r:
        raw = "".join(r.iter_text())
    events = dict(block.split("\n", 1) for block in raw.strip().split("\n\n"))
    facts = json.loads(events["event: facts"].removeprefix("data: "))
    assert facts["valid_time"]["source"] == "request"
    assert {f["text"] for f in facts["facts"]} == {ASSEMBLY, HOME}
    answer = json.loads(events["event: answer"].removeprefix("data: "))
    assert answer["valid_time"] == facts["valid_time"]


def facts(http: TestClient, **params: Any) -> set[str]:
    response = http.get("/v1/facts", params={"namespace": "desk", **params})
    assert response.status_code == 200, response.text
    return texts(response.json())


def test_get_facts_filters_by_valid_time_from_its_parameters_only(http: TestClient) -> None:
    assert facts(http) == {ASSEMBLY, CONGRESS, HOME}  # no valid-time filter
    assert facts(http, valid_at="2022-06-01T00:00:00Z") == {ASSEMBLY, HOME}
    assert facts(http, valid_from="2023-02-01T00:00:00Z") == {CONGRESS, HOME}
    assert facts(http, valid_to="2023-01-03T00:00:00Z") == {ASSEMBLY, HOME}
    window = {"valid_from": "2020-01-01T00:00:00Z", "valid_to": "2021-01-01T00:00:00Z"}
    assert facts(http, **window) == set()
    believed = facts(http, valid_at="2023-03-01T00:00:00Z", as_of="2023-06-01T00:00:00Z")
    assert believed == {ASSEMBLY, HOME}
    # A search is not read for a time: "in 2022" is text, and nothing is filtered.
    assert facts(http, q="Lawler's position in 2022") == {ASSEMBLY, CONGRESS, HOME}
    assert facts(http, q="Lawler's position", valid_at="2024-01-01T00:00:00Z") == {CONGRESS, HOME}
    listed = http.get("/v1/facts", params={"namespace": "desk"}).json()["facts"]
    congress = next(f for f in listed if f["text"] == CONGRESS)
    assert (congress["valid_from"], congress["valid_to"]) == ("2023-01-03T00:00:00Z", None)
    one = http.get(f"/v1/facts/{congress['fact_id']}", params={"namespace": "desk"}).json()
    assert one["valid_from"] == "2023-01-03T00:00:00Z"


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        (
            {"valid_at": "2022-01-01T00:00:00Z", "valid_from": "2021-01-01T00:00:00Z"},
            "give valid_at or valid_from/valid_to, not both",
        ),
        (
            {"valid_from": "2022-01-01T00:00:00Z", "valid_to": "2022-01-01T00:00:00Z"},
            "is not before valid_to",
        ),
        ({"valid_at": "2022-01-01"}, "valid_at"),
    ],
)
def test_get_facts_refuses_a_bad_valid_time(
    http: TestClient, params: dict[str, str], needle: str
) -> None:
    response = http.get("/v1/facts", params={"namespace": "desk", **params})
    assert response.status_code == 422, response.text
    assert needle in response.text


def test_openapi_describes_the_valid_time_fields(http: TestClient) -> None:
    spec = http.get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    ask_body = schemas["AskBody"]["properties"]
    assert "held in the world" in ask_body["valid_at"]["description"]
    assert "valid_between" in ask_body and ask_body["valid_between"]["description"]
    assert schemas["ValidBetween"]["properties"]["end"]["description"]
    assert {"valid_from", "valid_to"} <= set(schemas["FactOut"]["properties"])
    assert schemas["ValidTimeOut"]["properties"]["source"]
    assert "valid_time" in schemas["AskResponse"]["properties"]
    params = {p["name"]: p for p in spec["paths"]["/v1/facts"]["get"]["parameters"]}
    assert all(params[name]["description"] for name in ("valid_at", "valid_from", "valid_to"))
