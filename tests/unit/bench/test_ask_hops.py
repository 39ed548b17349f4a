"""The ask benchmark's 2-hop questions: names of the pool, planned by the rules."""

from __future__ import annotations

from bench.ask import hop_questions
from factstream.ask.hop_rules import plan_by_rules
from factstream.ask.time_plan import has_temporal_cue


def test_hop_questions_name_the_pools_people_and_plan_into_two_hops() -> None:
    sentences = ["Mike Lawler won the seat.", "Ana Silva moved to Lisbon.", "it rained"]
    asked = hop_questions(sentences, 5)
    assert len(asked) == 5 and asked[0] != asked[1] and asked[0] == asked[2]
    plans = [plan_by_rules(q) for q in asked]
    assert [p.anchor for p in plans if p] == ["Mike Lawler", "Ana Silva"] * 2 + ["Mike Lawler"]
    assert all(p is not None and p.hops == 2 for p in plans)
    assert hop_questions(["no names here"], 3) == []


def test_hop_questions_leave_out_names_that_would_reach_the_lm() -> None:
    # "Prince William's's employer" is no rule's shape (plan_hops.v1 would plan it) and
    # "Former ..." is a temporal cue (plan_time.v1 would plan its valid time).
    sentences = [
        "Prince William's visit went well.",
        "Former Chief Minister Ian Gorst spoke.",
        "Ana Silva moved to Lisbon.",
    ]
    asked = hop_questions(sentences, 3)
    assert asked == ["Who is the chief executive of Ana Silva's employer?"] * 3
    assert all(not has_temporal_cue(q) for q in asked)


def test_hop_questions_leave_out_names_read_as_a_time() -> None:
    # "of Jan" reads as a month: the hops would be planned from "... executive Boven's
    # employer?", which no rule reads (plan_hops.v1 would plan it).
    asked = hop_questions(["Jan Boven spoke.", "Ana Silva moved to Lisbon."], 2)
    assert asked == ["Who is the chief executive of Ana Silva's employer?"] * 2
