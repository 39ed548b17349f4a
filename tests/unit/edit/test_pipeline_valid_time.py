"""Valid time through the editor: dated facts, updates close, corrections invalidate."""

from __future__ import annotations

from datetime import UTC, datetime

from fixtures.decisions import Decisions
from fixtures.editing import NS, Harness, doc

from factstream.store.rules import valid_interval
from factstream.temporal import ValidInterval
from factstream.temporal.intervals import at
from factstream.topics.records import ChangeKind, EditOp, Fact

THEN = datetime(2020, 3, 2, tzinfo=UTC)
NOW = datetime(2024, 5, 6, tzinfo=UTC)  # a Monday: "on Monday" is 2024-04-29
MONDAY = datetime(2024, 4, 29, tzinfo=UTC)
PARKER_DATED = {
    "text": "Parker was CEO of Acme from 2001 to 2004.",
    "subject": "Parker",
    "relation": "was CEO of",
    "object": "Acme",
    "object_type": "organization",
    "time": "from 2001 to 2004",
}


async def fact(h: Harness, fact_id: str) -> Fact:
    return (await h.store.get(NS, [fact_id]))[fact_id]


async def ceo_now(h: Harness, when: datetime) -> list[str]:
    """The facts about Acme's CEO that held in the world at ``when``."""
    page = await h.store.list_facts(NS, valid=at(when))
    return [f.text for f in page.facts if "CEO" in f.text]


async def test_a_dated_past_state_holds_in_its_interval_only() -> None:
    h = Harness(Decisions(extract={"Parker was CEO": [PARKER_DATED]}))
    (add,) = await h.feed(doc("Parker was CEO of Acme from 2001 to 2004.", NOW, "d1"))
    assert add.op is EditOp.ADD
    assert (add.valid_from, add.valid_to) == (
        datetime(2001, 1, 1, tzinfo=UTC),
        datetime(2005, 1, 1, tzinfo=UTC),
    )
    assert await ceo_now(h, NOW) == []  # the document does not make him CEO now
    assert await ceo_now(h, datetime(2003, 6, 1, tzinfo=UTC)) == [PARKER_DATED["text"]]
    stored = await fact(h, add.fact_id)
    assert (stored.subject, stored.relation, stored.object, stored.object_type) == (
        "Parker",
        "was CEO of",
        "Acme",
        "organization",
    )


async def test_an_undated_fact_is_valid_from_the_event_time() -> None:
    h = Harness(Decisions(extract={"appointed": ["Parker is CEO of Acme."]}))
    (add,) = await h.feed(doc("Acme appointed Parker as CEO.", THEN, "d1"))
    assert (add.valid_from, add.valid_to) == (THEN, None)
    assert valid_interval(await fact(h, add.fact_id)) == ValidInterval(THEN, None)


async def test_a_new_ceo_closes_the_old_ceo_fact() -> None:
    decisions = Decisions(extract={"appointed": ["Parker is CEO of Acme."]})
    h = Harness(decisions)
    (first,) = await h.feed(doc("Acme appointed Parker as CEO.", THEN, "d1"))
    decisions.outdated = {"Parker is CEO": {"text": "Quinn is CEO of Acme.", "time": "on Monday"}}
    (rewrite,) = await h.feed(doc("Quinn succeeded Parker as CEO of Acme on Monday.", NOW, "d2"))
    assert (rewrite.op, rewrite.change) == (EditOp.REWRITE, ChangeKind.UPDATE)
    assert (rewrite.replaces, rewrite.valid_from, rewrite.valid_to) == (first.fact_id, MONDAY, None)
    old = await fact(h, first.fact_id)
    # Not made false: it held until the change, and stays true of that interval.
    assert old.truth and [e.truth for e in old.history] == [True]
    assert valid_interval(old) == ValidInterval(THEN, MONDAY)
    assert old.replaced_by == rewrite.fact_id
    assert await ceo_now(h, NOW) == ["Quinn is CEO of Acme."]
    assert await ceo_now(h, datetime(2023, 1, 1, tzinfo=UTC)) == ["Parker is CEO of Acme."]


async def test_a_closed_fact_is_not_retrieved_again() -> None:
    decisions = Decisions(extract={"appointed": ["Parker is CEO of Acme."]})
    h = Harness(decisions)
    await h.feed(doc("Acme appointed Parker as CEO.", THEN, "d1"))
    decisions.outdated = {"Parker is CEO": None}
    (close,) = await h.feed(doc("Parker left Acme.", NOW, "d2"))
    before = len(h.lm.requests)
    later = await h.feed(doc("Parker left Acme, again.", datetime(2025, 1, 1, tzinfo=UTC), "d3"))
    # d3 retrieves nothing to classify: extraction only.
    assert later == [] and [r.task for r in h.lm.requests[before:]] == ["extract_facts"]
    assert (close.op, close.change, close.valid_to) == (EditOp.CLOSE, ChangeKind.UPDATE, NOW)
    closed = await fact(h, close.fact_id)
    assert closed.truth and valid_interval(closed) == ValidInterval(THEN, NOW)


async def test_a_correction_invalidates() -> None:
    decisions = Decisions(extract={"appointed": ["Parker is CEO of Acme."]})
    h = Harness(decisions)
    await h.feed(doc("Acme appointed Parker as CEO.", THEN, "d1"))
    decisions.false = {"Parker is CEO": None}
    (invalidate,) = await h.feed(doc("Parker was never Acme's CEO: a mistake.", NOW, "d2"))
    assert (invalidate.op, invalidate.change) == (EditOp.INVALIDATE, ChangeKind.CORRECTION)
    gone = await fact(h, invalidate.fact_id)
    assert not gone.truth and [e.truth for e in gone.history] == [True, False]


async def test_v1_prompts_stay_selectable_and_edit_as_before() -> None:
    decisions = Decisions(extract={"appointed": ["Parker is CEO of Acme."]})
    v1 = {
        "classify_prompt": "classify_facts.v1",
        "rewrite_prompt": "rewrite_fact.v1",
        "extract_prompt": "extract_facts.v1",
    }
    h = Harness(decisions, **v1)
    await h.feed(doc("Acme appointed Parker as CEO.", THEN, "d1"))
    decisions.outdated = {"Parker is CEO": None}  # v1 cannot say outdated: make_false
    (invalidate,) = await h.feed(doc("Parker left Acme.", NOW, "d2"))
    assert (invalidate.op, invalidate.change) == (EditOp.INVALIDATE, None)
    prompts = {r.prompt for r in h.lm.requests}
    assert prompts == {"classify_facts.v1", "rewrite_fact.v1", "extract_facts.v1"}
