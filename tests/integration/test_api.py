"""The HTTP API and the Kafka query agent against real services and a live uvicorn server.

Facts are written through the real materializer into a per-test Weaviate collection; the
LM is the deterministic stub (fixtures/openai_stub.py: multiple choice picks the first choice
some listed fact contains; free form echoes the first listed fact), one test the real one.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from aiokafka import AIOKafkaProducer
from fixtures import bitemporal
from fixtures.api_server import serving
from fixtures.decisions import Decisions
from fixtures.stack import Stack, StackFactory

from factstream.access import hash_key
from factstream.api.app import create_app
from factstream.clients import Clients, open_clients
from factstream.config import Settings
from factstream.edit.materializer import Materializer
from factstream.topics.definitions import TopicName
from factstream.topics.records import (
    Answer,
    Document,
    EditOp,
    FactEdit,
    edit_id_for,
    fact_id_for,
)

T0 = datetime(2023, 1, 1, tzinfo=UTC)
ASSEMBLY = "Mike Lawler is a member of the New York State Assembly."
HOME = "Mike Lawler lives in Pearl River."
CONGRESS = "Mike Lawler is a United States representative."
OSLO = "The secret base of Mike Lawler is in Oslo."
CHOICES = ["State Assembly", "United States representative"]
WORLD = "world"  # fixtures/bitemporal.py: the Assembly until 2023-01-03, learned 2023-09-01
KEYS = {
    "desk-key": {"read": ["desk"], "publish": ["desk"]},
    "other-key": {"read": ["other"], "publish": ["other"]},
    "admin-key": {"read": ["*"], "publish": []},
}


def day(n: int) -> datetime:
    return T0 + timedelta(days=n)


def _edit(ns: str, doc: str, pos: int, size: int, op: EditOp, text: str, when: datetime,
          fact_id: str | None = None) -> FactEdit:  # fmt: skip
    return FactEdit(
        edit_id=edit_id_for(ns, doc, pos),
        namespace=ns,
        fact_id=fact_id or fact_id_for(ns, doc, pos),
        op=op,
        text=text,
        truth=op is not EditOp.INVALIDATE,
        event_time=when,
        document_id=doc,
        batch={"id": f"{doc}@b", "size": size, "position": pos},  # type: ignore[arg-type]
        input={"topic": "docs", "partition": 0, "offset": 0},  # type: ignore[arg-type]
        decided_by={"model": "m", "prompt_version": "p.v1"},  # type: ignore[arg-type]
        created_at=when,
    )


@dataclass
class Api:
    url: str
    stack: Stack
    ids: dict[str, str]  # fact id by text

    def client(self, key: str | None = None) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.AsyncClient(base_url=self.url, headers=headers, timeout=120)


async def _write_facts(clients: Clients) -> dict[str, str]:
    materializer = Materializer(clients.store, clients.embedder)
    assembly = fact_id_for("desk", "d1", 0)
    await materializer.apply(
        [
            _edit("desk", "d1", 0, 2, EditOp.ADD, ASSEMBLY, day(0)),
            _edit("desk", "d1", 1, 2, EditOp.ADD, HOME, day(0)),
        ]
    )
    await materializer.apply(
        [
            _edit("desk", "d2", 0, 2, EditOp.INVALIDATE, ASSEMBLY, day(30), assembly),
            _edit("desk", "d2", 1, 2, EditOp.ADD, CONGRESS, day(30)),
        ]
    )
    await materializer.apply([_edit("other", "o1", 0, 1, EditOp.ADD, OSLO, day(0))])
    for batch in bitemporal.lawler_edits(WORLD):
        await materializer.apply(batch)
    return {
        ASSEMBLY: assembly,
        HOME: fact_id_for("desk", "d1", 1),
        CONGRESS: fact_id_for("desk", "d2", 1),
        OSLO: fact_id_for("other", "o1", 0),
    }


async def _serve(stack: Stack) -> AsyncIterator[Api]:
    async with open_clients(stack.settings) as clients:
        ids = await _write_facts(clients)
        async with serving(create_app(stack.settings, clients=clients)) as url:
            yield Api(url, stack, ids)


def _env() -> dict[str, str]:
    return {
        "FACTSTREAM_API_KEYS": json.dumps({hash_key(k): v for k, v in KEYS.items()}),
        "FACTSTREAM_API_MIN_SIMILARITY": "-1",
        "FACTSTREAM_API_MAX_BODY_BYTES": "4096",
    }


@pytest.fixture
async def api(stack_factory: StackFactory) -> AsyncIterator[Api]:
    stack = await stack_factory(Decisions(), **_env())
    async for served in _serve(stack):
        yield served


def texts(body: dict[str, Any]) -> set[str]:
    return {f["text"] for f in body["facts"]}


async def test_answers_use_only_facts_true_at_as_of_with_histories(api: Api) -> None:
    async with api.client("desk-key") as http:
        ask = {"question": "Which office does Mike Lawler hold?", "namespace": "desk"}
        now = (await http.post("/v1/ask", json={**ask, "choices": CHOICES})).json()
        assert texts(now) == {CONGRESS, HOME}
        assert now["answer"] == "United States representative" and now["model"] == "stub"
        assert all(f["truth"] for f in now["facts"]) and now["prompt"] == "answer_choice.v1"
        assert set(now["timings"]) == {"prepare", "embed", "retrieve", "answer", "total"}
        assert all(isinstance(f["score"], float) for f in now["facts"])
        by_text = {f["text"]: f for f in now["facts"]}
        assert by_text[CONGRESS]["fact_id"] == api.ids[CONGRESS]
        assert [h["truth"] for h in by_text[HOME]["history"]] == [True]

        before = {**ask, "choices": CHOICES, "as_of": day(10).isoformat()}
        then = (await http.post("/v1/ask", json=before)).json()
        assert texts(then) == {ASSEMBLY, HOME} and then["answer"] == "State Assembly"
        by_text = {f["text"]: f for f in then["facts"]}
        # As of day 10 the invalidation (day 30) had not happened: history up to then only.
        assert [(h["ts"][:10], h["truth"]) for h in by_text[ASSEMBLY]["history"]] == [
            ("2023-01-01", True)
        ]
        later = (await http.post("/v1/ask", json={**before, "as_of": day(40).isoformat()})).json()
        assert texts(later) == {CONGRESS, HOME}
        earlier = await http.post("/v1/ask", json={**before, "as_of": day(-1).isoformat()})
        assert earlier.status_code == 200 and earlier.json()["facts"] == []

        free = (await http.post("/v1/ask", json={**ask, "top_k": 1})).json()
        assert len(free["facts"]) == 1 and free["answer"] == free["facts"][0]["text"]
        assert free["prompt"] == "answer_free.v1" and free["answer"] != ASSEMBLY

        one = await http.get(f"/v1/facts/{api.ids[ASSEMBLY]}", params={"namespace": "desk"})
        assert [(h["truth"], h["document_id"]) for h in one.json()["history"]] == [
            (True, "d1"),
            (False, "d2"),
        ]
        assert one.json()["truth"] is False
        one_then = await http.get(
            f"/v1/facts/{api.ids[ASSEMBLY]}",
            params={"namespace": "desk", "as_of": day(10).isoformat()},
        )
        assert one_then.json()["truth"] is True and len(one_then.json()["history"]) == 1

        listed = (await http.get("/v1/facts", params={"namespace": "desk"})).json()
        assert texts(listed) == {CONGRESS, HOME}
        everything = await http.get("/v1/facts", params={"namespace": "desk", "include_false": 1})
        assert texts(everything.json()) == {CONGRESS, HOME, ASSEMBLY}
        old = await http.get(
            "/v1/facts", params={"namespace": "desk", "as_of": day(10).isoformat()}
        )
        assert texts(old.json()) == {ASSEMBLY, HOME}
        paged = (await http.get("/v1/facts", params={"namespace": "desk", "limit": 1})).json()
        assert len(paged["facts"]) == 1 and paged["cursor"]
        rest = await http.get(
            "/v1/facts", params={"namespace": "desk", "limit": 1, "cursor": paged["cursor"]}
        )
        assert texts(rest.json()) | texts(paged) == {CONGRESS, HOME}
        searched = await http.get("/v1/facts", params={"namespace": "desk", "q": "Congress"})
        assert texts(searched.json()) == {CONGRESS, HOME}
        assert all(f["score"] is not None for f in searched.json()["facts"])


async def test_bitemporal_reads_on_weaviate(api: Api) -> None:
    """as_of (what was believed) and valid_at / valid_between (what held), alone or together."""
    ask = {"question": "What is Mike Lawler's position?", "namespace": WORLD}
    assembly, congress, home = bitemporal.ASSEMBLY, bitemporal.CONGRESS, bitemporal.HOME
    async with api.client("admin-key") as http:

        async def asked(**extra: Any) -> dict[str, Any]:
            response = await http.post("/v1/ask", json={**ask, **extra})
            assert response.status_code == 200, response.text
            reply: dict[str, Any] = response.json()
            return reply

        now = await asked()
        assert texts(now) == {congress, home} and now["valid_time"]["source"] == "current"
        then = await asked(valid_at="2023-03-01T00:00:00Z")
        assert texts(then) == {congress, home} and then["valid_time"]["source"] == "request"
        believed = await asked(valid_at="2023-03-01T00:00:00Z", as_of="2023-06-01T00:00:00Z")
        assert texts(believed) == {assembly, home}
        seat = next(f for f in believed["facts"] if f["text"] == assembly)
        assert (seat["valid_from"], seat["valid_to"]) == ("2021-01-01T00:00:00Z", None)
        named = await asked(question="What was Mike Lawler's position in 2022?")
        assert texts(named) == {assembly, home}
        assert named["valid_time"]["expression"] == "in 2022"
        seat = next(f for f in named["facts"] if f["text"] == assembly)
        assert seat["valid_to"] == "2023-01-03T00:00:00Z"  # known now
        window = {"start": "2022-12-01T00:00:00Z", "end": "2023-02-01T00:00:00Z"}
        assert texts(await asked(valid_between=window)) == {assembly, congress, home}
        both = await http.post(
            "/v1/ask", json={**ask, "valid_at": window["start"], "valid_between": window}
        )
        assert both.status_code == 422 and "not both" in both.text

        async def listed(**params: Any) -> set[str]:
            response = await http.get("/v1/facts", params={"namespace": WORLD, **params})
            assert response.status_code == 200, response.text
            return texts(response.json())

        assert await listed() == {assembly, congress, home}
        assert await listed(valid_at="2022-06-01T00:00:00Z") == {assembly, home}
        assert await listed(valid_from="2023-02-01T00:00:00Z") == {congress, home}
        old = {"valid_at": "2023-03-01T00:00:00Z", "as_of": "2023-06-01T00:00:00Z"}
        assert await listed(**old) == {assembly, home}
        assert await listed(q="position in 2022") == {assembly, congress, home}
        searched = await listed(q="position", valid_at="2022-06-01T00:00:00Z")
        assert searched == {assembly, home}


async def test_streamed_answer_health_readiness_metrics_and_docs(api: Api) -> None:
    async with api.client("desk-key") as http:
        body = {"question": "Where does Lawler live?", "namespace": "desk", "stream": True}
        events = await _streamed(http, body)
        names = [name for name, _ in events]
        tokens = [data for name, data in events if name == "token"]
        assert names == ["facts"] + ["token"] * len(tokens) + ["answer", "done"]
        answer = events[-2][1]
        assert answer["answer"] in {CONGRESS, HOME} and texts(answer) == {CONGRESS, HOME}
        # The stub streams word by word: the tokens are the answer, as it was written.
        assert len(tokens) > 3
        assert "".join(t["fields"].get("answer", "") for t in tokens) == answer["answer"]

        assert (await http.get("/healthz")).json() == {"status": "ok"}
        ready = await http.get("/readyz")
        assert ready.status_code == 200, ready.text
        assert ready.json()["checks"] == {"kafka": "ok", "weaviate": "ok", "lm": "ok"}
        metrics = (await http.get("/metrics")).text
        assert 'factstream_ask_seconds_count{stage="total"} 1.0' in metrics
        assert (
            'factstream_api_requests_total{method="POST",route="/v1/ask",status="200"}' in metrics
        )
        assert (await http.get("/docs")).status_code == 200
        paths = (await http.get("/openapi.json")).json()["paths"]
        assert {"/v1/ask", "/v1/facts", "/v1/facts/{fact_id}", "/v1/documents"} <= set(paths)


async def _streamed(http: httpx.AsyncClient, body: dict[str, Any]) -> list[tuple[str, Any]]:
    """The server-sent events of a streamed ask: (name, decoded data)."""
    async with http.stream("POST", "/v1/ask", json=body) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        raw = "".join([chunk async for chunk in response.aiter_text()])
    events = [block.split("\n", 1) for block in raw.strip().split("\n\n")]
    return [(h.removeprefix("event: "), json.loads(d.removeprefix("data: "))) for h, d in events]


async def test_streamed_tokens_from_the_real_llama_server(
    stack_factory: StackFactory, lm_settings: Settings
) -> None:
    """SmolLM2 on llama.cpp streams the constrained answer: the tokens are the final answer."""
    stack = await stack_factory(Decisions(), lm_url=lm_settings.lm.url, **_env())
    async for served in _serve(stack):
        async with served.client("desk-key") as http:
            body = {"question": "Where does Mike Lawler live?", "namespace": "desk", "stream": True}
            events = await _streamed(http, body)
    names = [name for name, _ in events]
    assert names[0] == "facts" and names[-2:] == ["answer", "done"], names
    tokens = [data for name, data in events if name == "token"]
    last = max(t["attempt"] for t in tokens)
    final = [t for t in tokens if t["attempt"] == last]
    assert len(final) > 3  # llama.cpp sends a token per chunk, not the answer at once
    answer = events[-2][1]
    assert answer["model"] != "stub" and answer["answer"].strip()
    assert json.loads("".join(t["text"] for t in final))["answer"] == answer["answer"]
    assert "".join(t["fields"].get("answer", "") for t in final) == answer["answer"]


def _document(ns: str, text: str) -> dict[str, Any]:
    return {"namespace": ns, "kind": "article", "timestamp": day(50).isoformat(), "text": text}


async def test_auth_matrix_with_no_cross_namespace_reads(api: Api) -> None:
    ask = {"question": "Where is the secret base of Mike Lawler?", "namespace": "desk"}
    desk_fact = f"/v1/facts/{api.ids[CONGRESS]}"
    calls: list[tuple[str, str, dict[str, Any]]] = [
        ("POST", "/v1/ask", {"json": ask}),
        ("GET", "/v1/facts", {"params": {"namespace": "desk"}}),
        ("GET", "/v1/facts", {"params": {"namespace": "desk", "q": "Oslo"}}),
        ("GET", desk_fact, {"params": {"namespace": "desk"}}),
        ("POST", "/v1/documents", {"json": {"documents": [_document("desk", "[doc-a] x")]}}),
    ]
    expected = {None: 401, "wrong-key": 401, "other-key": 403, "desk-key": None}
    for key, status in expected.items():
        async with api.client(key) as http:
            for method, path, kwargs in calls:
                response = await http.request(method, path, **kwargs)
                assert "Oslo" not in response.text, (key, path)
                if status is None:
                    assert response.status_code in (200, 202), (path, response.text)
                else:
                    assert response.status_code == status, (key, method, path, response.text)
                    assert response.json()["detail"]
                    if status == 401:
                        assert response.headers["www-authenticate"] == "Bearer"

    async with api.client("desk-key") as http:
        # The desk key never reads "other", whatever route or id it uses.
        other_ask = await http.post("/v1/ask", json={**ask, "namespace": "other"})
        assert other_ask.status_code == 403 and "Oslo" not in other_ask.text
        other = await http.get(f"/v1/facts/{api.ids[OSLO]}", params={"namespace": "other"})
        assert other.status_code == 403
        hidden = await http.get(f"/v1/facts/{api.ids[OSLO]}", params={"namespace": "desk"})
        assert hidden.status_code == 404 and "Oslo" not in hidden.text
        answer = (await http.post("/v1/ask", json={**ask, "top_k": 50})).json()
        assert all(f["namespace"] == "desk" for f in answer["facts"]) and "Oslo" not in str(answer)
        mixed = {"documents": [_document("desk", "a"), _document("other", "b")]}
        assert (await http.post("/v1/documents", json=mixed)).status_code == 403
    async with api.client("admin-key") as http:  # reads everywhere, publishes nowhere
        assert (await http.post("/v1/ask", json={**ask, "namespace": "other"})).status_code == 200
        refused = await http.post("/v1/documents", json={"documents": [_document("desk", "a")]})
        assert refused.status_code == 403

    published = await api.stack.read_topic(TopicName.DOCUMENTS, Document)
    assert [(d.namespace, d.text) for d in published] == [("desk", "[doc-a] x")]


async def test_limits_and_clear_errors(api: Api) -> None:
    ask = {"question": "Which office?", "namespace": "desk"}
    async with api.client("admin-key") as http:
        cases: list[tuple[dict[str, Any], int, str]] = [
            ({**ask, "question": "x" * 2001}, 422, "at most 2000"),
            ({**ask, "question": "   "}, 422, "empty"),
            ({**ask, "top_k": 0}, 422, "top_k"),
            ({**ask, "top_k": 51}, 422, "top_k"),
            ({**ask, "namespace": "nowhere"}, 404, "'nowhere' not found"),
            ({**ask, "namespace": "bad ns!"}, 422, "namespace"),
            ({**ask, "as_of": "yesterday"}, 422, "as_of"),
            ({**ask, "as_of": "2023-01-01T00:00:00"}, 422, "as_of"),
            ({**ask, "choices": ["only one"]}, 422, "2 to 20 choices"),
            ({**ask, "choices": ["a", "a"]}, 422, "distinct"),
            ({**ask, "surprise": 1}, 422, "surprise"),
        ]
        for body, status, needle in cases:
            response = await http.post("/v1/ask", json=body)
            assert response.status_code == status, (body, response.text)
            assert needle in response.text, (needle, response.text)
        bad_time = await http.get("/v1/facts", params={"namespace": "desk", "as_of": "soon"})
        assert bad_time.status_code == 422 and "as_of" in bad_time.text
        missing = await http.get("/v1/facts", params={"namespace": "nowhere"})
        assert missing.status_code == 404
        big = {**ask, "question": "y" * 5000}
        too_big = await http.post("/v1/ask", json=big)
        assert too_big.status_code == 413 and "4096 bytes" in too_big.text

        async def chunks() -> AsyncIterator[bytes]:
            for _ in range(10):
                yield b" " * 1000

        chunked = await http.post(
            "/v1/ask", content=chunks(), headers={"content-type": "application/json"}
        )
        assert chunked.status_code == 413
    async with api.client("desk-key") as http:
        no_kind = {"documents": [{k: v for k, v in _document("desk", "t").items() if k != "kind"}]}
        invalid = await http.post("/v1/documents", json=no_kind)
        assert invalid.status_code == 422 and "kind" in invalid.text
        empty = await http.post("/v1/documents", json={"documents": []})
        assert empty.status_code == 422


async def _ask_on_kafka(stack: Stack, questions: list[tuple[dict[str, Any], str | None]]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=stack.settings.kafka.bootstrap_servers)
    await producer.start()
    try:
        for question, key in questions:
            headers = [("authorization", f"Bearer {key}".encode())] if key else []
            await producer.send_and_wait(
                stack.topic(TopicName.QUESTIONS),
                json.dumps(question).encode(),
                key=str(question.get("namespace", "desk")).encode(),
                headers=headers,
            )
    finally:
        await producer.stop()


async def test_kafka_questions_are_answered_by_question_id(api: Api) -> None:
    stack = api.stack
    stack.start_worker()
    q = {"question": "Which office does Mike Lawler hold?", "namespace": "desk"}
    questions: list[tuple[dict[str, Any], str | None]] = [
        ({**q, "id": "q-now", "choices": CHOICES}, "desk-key"),
        ({**q, "id": "q-then", "choices": CHOICES, "as_of": day(10).isoformat()}, "desk-key"),
        ({**q, "id": "q-other", "namespace": "other"}, "desk-key"),
        ({**q, "id": "q-nokey"}, None),
        ({**q, "id": "q-wrong"}, "wrong-key"),
        ({**q, "id": "q-nowhere", "namespace": "nowhere"}, "admin-key"),
        ({"id": "q-invalid", "namespace": "desk"}, "desk-key"),
    ]
    await _ask_on_kafka(stack, questions)

    answers: dict[str, Answer] = {}

    async def all_answered() -> bool:
        for answer in await stack.read_topic(TopicName.ANSWERS, Answer):
            answers[answer.question_id] = answer
        return len(answers) >= len(questions)

    await stack.wait_for(all_answered, "every question answered", timeout_s=300)
    now, then = answers["q-now"], answers["q-then"]
    assert now.error is None and now.answer == "United States representative"
    assert {f.text for f in now.facts} == {CONGRESS, HOME} and now.model == "stub"
    assert then.answer == "State Assembly" and {f.text for f in then.facts} == {ASSEMBLY, HOME}
    assert set(now.timings) == {"prepare", "embed", "retrieve", "answer", "total"}
    errors = {qid: (a.error or "").split(":")[0] for qid, a in answers.items() if a.error}
    assert errors == {
        "q-other": "forbidden",
        "q-nokey": "unauthenticated",
        "q-wrong": "unauthenticated",
        "q-nowhere": "not_found",
        "q-invalid": "invalid",
    }
    assert all(not a.facts and a.answer is None for a in answers.values() if a.error)
    assert "Oslo" not in str(answers["q-other"])


async def test_real_lm_answers_one_of_the_choices(
    stack_factory: StackFactory, lm_settings: Settings
) -> None:
    stack = await stack_factory(lm_url=lm_settings.lm.url, **_env())
    async for served in _serve(stack):
        async with served.client("desk-key") as http:
            body = {"question": "Which office does Mike Lawler hold?", "namespace": "desk"}
            response = await http.post("/v1/ask", json={**body, "choices": CHOICES})
            assert response.status_code == 200, response.text
            reply = response.json()
            assert reply["answer"] in CHOICES and reply["model"] == lm_settings.lm.model
            assert texts(reply) == {CONGRESS, HOME}


async def test_factstream_ask_command(api: Api) -> None:
    args = ["ask", "Which office does Mike Lawler hold?", "-n", "desk", "--as-of"]
    args += [day(10).isoformat(), "--choices", CHOICES[0], "--choices", CHOICES[1]]
    args += ["--valid-at", day(5).isoformat()]
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "factstream", *args],
        env={**os.environ, **api.stack.env, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "answer: State Assembly" in done.stdout and ASSEMBLY in done.stdout
    assert CONGRESS not in done.stdout
    assert "valid time (request): at 2023-01-06" in done.stdout
