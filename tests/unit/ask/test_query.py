"""The query agent's logic on the in-memory store with scripted answers; the Kafka handler."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from fixtures.decisions import Decisions

from factstream.access import KeyTable, hash_key, load_key_table
from factstream.agents.query import QuestionHandler, key_from_headers
from factstream.ask.query import AskRequest, QueryEngine
from factstream.config import ApiSettings, Settings
from factstream.edit.materializer import Materializer
from factstream.embed.fake import HashingEmbedder
from factstream.errors import NamespaceNotFound, QuestionInvalid
from factstream.lm.base import CompletionRequest
from factstream.lm.fake import ScriptedLM
from factstream.lm.tasks.runner import TaskRunner
from factstream.store.memory import InMemoryFactStore
from factstream.topics.records import EditOp, FactEdit, Question, edit_id_for, fact_id_for

T0 = datetime(2023, 1, 1, tzinfo=UTC)
OLD, NEW = "Lawler sits in the State Assembly.", "Lawler sits in Congress."


def edit(
    doc: str, pos: int, size: int, op: EditOp, text: str, days: int, fact: str = ""
) -> FactEdit:
    return FactEdit(
        edit_id=edit_id_for("desk", doc, pos),
        namespace="desk",
        fact_id=fact or fact_id_for("desk", doc, pos),
        op=op,
        text=text,
        truth=op is not EditOp.INVALIDATE,
        event_time=T0 + timedelta(days=days),
        document_id=doc,
        batch={"id": doc, "size": size, "position": pos},  # type: ignore[arg-type]
        input={"topic": "t", "partition": 0, "offset": 0},  # type: ignore[arg-type]
        decided_by={"model": "m", "prompt_version": "p.v1"},  # type: ignore[arg-type]
        created_at=T0,
    )


@pytest.fixture
async def engine() -> QueryEngine:
    store, embedder = InMemoryFactStore(), HashingEmbedder()
    materializer = Materializer(store, embedder)
    await materializer.apply([edit("d1", 0, 1, EditOp.ADD, OLD, 0)])
    old_id = fact_id_for("desk", "d1", 0)
    await materializer.apply(
        [
            edit("d2", 0, 2, EditOp.INVALIDATE, OLD, 30, old_id),
            edit("d2", 1, 2, EditOp.ADD, NEW, 30),
        ]
    )
    decisions = Decisions()

    def reply(request: CompletionRequest) -> str:
        return decisions.answer(None, request.messages[-1].content)

    runner = TaskRunner(ScriptedLM([reply] * 50))
    return QueryEngine(store, embedder, runner, ApiSettings(min_similarity=-1.0), alpha=0.75)


async def test_facts_and_answers_follow_as_of(engine: QueryEngine) -> None:
    choices = ["State Assembly", "Congress"]
    now = await engine.ask(AskRequest("Where does Lawler sit?", "desk", choices=choices))
    assert [f.fact.text for f in now.facts] == [NEW] and now.answer == "Congress"
    when = T0 + timedelta(days=10)
    then = await engine.ask(AskRequest("Where does Lawler sit?", "desk", when, choices=choices))
    assert [f.fact.text for f in then.facts] == [OLD] and then.answer == "State Assembly"
    assert then.facts[0].truth and [h.truth for h in then.facts[0].history] == [True]
    assert set(then.timings) == {"embed", "retrieve", "answer", "total"}


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (AskRequest(" ", "desk"), "empty"),
        (AskRequest("x" * 2001, "desk"), "2000"),
        (AskRequest("q", "desk", top_k=0), "top_k"),
        (AskRequest("q", "desk", top_k=51), "top_k"),
        (AskRequest("q", "desk", choices=["a"]), "choices"),
        (AskRequest("q", "desk", choices=["a", "a"]), "distinct"),
    ],
)
async def test_bounds(engine: QueryEngine, request_: AskRequest, message: str) -> None:
    with pytest.raises(QuestionInvalid, match=message):
        await engine.ask(request_)


async def test_unknown_namespace(engine: QueryEngine) -> None:
    with pytest.raises(NamespaceNotFound, match="'elsewhere' not found"):
        await engine.ask(AskRequest("q", "elsewhere"))


async def test_the_namespace_is_looked_up_only_when_the_search_finds_nothing(
    engine: QueryEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 26: a hit proves the namespace exists, so a question that finds facts makes
    no namespace round trip; one that finds none is still told a missing namespace. Issue
    40: the lookup asks for the one namespace, never lists them all."""
    store = engine._store  # noqa: SLF001
    looked: list[str] = []
    lookup = store.has_namespace

    async def counted(namespace: str) -> bool:
        looked.append(namespace)
        return await lookup(namespace)

    async def refused() -> list[str]:
        raise AssertionError("every namespace listed to answer one question")

    monkeypatch.setattr(store, "has_namespace", counted)
    monkeypatch.setattr(store, "namespaces", refused)
    assert [
        f.fact.text for f in await engine.retrieve(AskRequest("Where does Lawler sit?", "desk"))
    ]
    assert looked == []
    long_before = AskRequest("Where does Lawler sit?", "desk", T0 - timedelta(days=1))
    assert await engine.retrieve(long_before) == []  # the namespace exists, nothing then
    assert looked == ["desk"]
    with pytest.raises(NamespaceNotFound, match="'elsewhere' not found"):
        await engine.retrieve(AskRequest("Where does Lawler sit?", "elsewhere"))
    assert looked == ["desk", "elsewhere"]


def test_key_from_headers() -> None:
    assert key_from_headers([("Authorization", b"Bearer k1")]) == "k1"
    assert key_from_headers({"authorization": b"bearer k2"}) == "k2"
    assert key_from_headers([("authorization", b"Basic x")]) is None
    assert key_from_headers(None) is None


async def test_question_handler_answers_errors_by_code(engine: QueryEngine) -> None:
    keys = load_key_table(ApiSettings(keys=json.dumps({hash_key("k"): {"read": ["desk"]}})))
    handler = QuestionHandler(engine, keys)
    question = Question(id="q1", namespace="desk", question="Where does Lawler sit?")
    good = await handler.handle(b"desk", question.to_bytes(), "k")
    assert good is not None and good.error is None and good.answer == NEW
    for key, api_key, code in [
        (b"desk", None, "unauthenticated"),
        (b"other", "k", "invalid"),
    ]:
        answer = await handler.handle(key, question.to_bytes(), api_key)
        assert answer is not None and (answer.error or "").startswith(code + ":")
    wrong_ns = Question(id="q2", namespace="other", question="q")
    forbidden = await handler.handle(b"other", wrong_ns.to_bytes(), "k")
    assert forbidden is not None and (forbidden.error or "").startswith("forbidden:")
    broken = await handler.handle(b"desk", b'{"id": "q3", "namespace": "desk"}', "k")
    assert broken is not None and broken.question_id == "q3" and broken.error
    assert await handler.handle(b"desk", b"not json", "k") is None
    open_handler = QuestionHandler(engine, KeyTable(open_access=True))
    assert (await open_handler.handle(None, question.to_bytes(), None)).error is None  # type: ignore[union-attr]


class _AlphaStore(InMemoryFactStore):
    """The in-memory store, noting the hybrid weight of every search."""

    def __init__(self) -> None:
        super().__init__()
        self.alphas: list[float] = []

    async def search(self, *args: Any, **kwargs: Any) -> Any:
        self.alphas.append(kwargs["alpha"])
        return await super().search(*args, **kwargs)


async def test_questions_search_with_the_api_alpha_not_the_editors() -> None:
    store = _AlphaStore()
    await Materializer(store, HashingEmbedder()).apply([edit("d1", 0, 1, EditOp.ADD, OLD, 0)])
    settings = Settings.from_env({"FACTSTREAM_API_ALPHA": "0.3", "FACTSTREAM_EDITOR_ALPHA": "0.9"})
    clients = SimpleNamespace(
        store=store,
        embedder=HashingEmbedder(),
        runner=TaskRunner(ScriptedLM([])),
        metrics=SimpleNamespace(query=None),
    )
    engine = QueryEngine.of(clients, settings)  # type: ignore[arg-type]
    await engine.retrieve(AskRequest("Where does Lawler sit?", "desk"))
    assert store.alphas == [0.3]
