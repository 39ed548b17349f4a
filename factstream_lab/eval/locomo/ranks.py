"""Why the turns knowledge base misses evidence: where each evidence turn ranks, per side.

``python -m factstream_lab.eval.locomo.ranks --data DIR --out results/eval`` loads each
conversation's turns as passages (``kb_turns``, as ``eval locomo --kb turns`` does) and puts
every question to the ask path's first stage as ``search_facts`` does it (the valid time read
from the question, the configured common-word and word-form settings), three times, deep:
the hybrid search at the configured weight, BM25 alone and the embedding alone. For each
evidence turn it records its rank in each list, and from them, per category:

- recall@k of each side at several depths (is it the limit, the fusion or a side);
- the **fusion bound**: a turn that shares no word with the keyword query (BM25 gives it
  nothing) and ranks below k on the embedding side cannot be in the top k of any
  alpha-weighted fusion of the two sides (the k turns above it on the embedding side score
  more on it and no less on BM25), so recall@k of every such fusion is at most the share of
  evidence turns that match a keyword or rank within k on the embedding side;
- who said the evidence: the share said by the speaker the question names;
- the turn before the evidence: how often it ranks within k when the evidence does not (a
  reply that names nothing of the question, under the turn it answers);
- re-rankings of the hybrid list computed from its scores (not the ask path's: a
  measurement of what such a re-ranking could reach): the named speaker's turns raised by
  ``SPEAKER_BONUS``, and a turn given ``NEIGHBOUR_SHARE`` of the score of the turn before it.

Every question with evidence is asked; nothing is tuned to named misses.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from statistics import fmean
from typing import Any

from prometheus_client import CollectorRegistry

from factstream.ask.ask_records import AskRequest
from factstream.ask.common_words import without_common_words
from factstream.ask.keywords import keyword_query
from factstream.ask.single_answer import resolve_valid_time
from factstream.clients import open_clients
from factstream.config import ApiSettings, Settings
from factstream.edit.materializer import Materializer
from factstream.embed.base import Embedder
from factstream.store.base import FactStore
from factstream_lab.eval.locomo.data import CATEGORIES, Conversation, Question, load_locomo
from factstream_lab.eval.locomo.kb_turns import load_turns

__all__ = [
    "DEPTHS",
    "NEIGHBOUR_SHARE",
    "SPEAKER_BONUS",
    "QuestionRanks",
    "named_speaker",
    "rank_of",
    "reranked",
    "summarize",
]

DEPTHS = (10, 20, 50, 100, 200)
SIDES = {"hybrid": None, "keywords": 0.0, "embedding": 1.0}  # None: the configured alpha
SPEAKER_BONUS = (0.1, 0.3)  # added to a fused score in [0, 1]: a tenth, a third of its range
NEIGHBOUR_SHARE = (0.25, 0.5)  # of the score of the turn said before
_K = 10


@dataclass
class QuestionRanks:
    """One question's evidence turns and the deep lists of each side, best first
    (turn id, fused score)."""

    conversation: str
    category: int
    question: str
    evidence: tuple[str, ...]
    named: str | None  # the one speaker the question names, if one
    lists: dict[str, list[tuple[str, float]]] = field(default_factory=dict)
    search_text: str = ""

    def ranks(self, side: str) -> list[int | None]:
        order = [turn for turn, _ in self.lists[side]]
        return [rank_of(order, turn) for turn in self.evidence]


def rank_of(order: Sequence[str], turn: str) -> int | None:
    """``turn``'s 1-based rank in ``order``, None when absent."""
    try:
        return order.index(turn) + 1
    except ValueError:
        return None


def named_speaker(question: str, speakers: Sequence[str]) -> str | None:
    """The one speaker whose first name the question has as a word (None: none or both)."""
    named = [s for s in speakers if re.search(rf"\b{re.escape(s.split()[0])}\b", question)]
    return named[0] if len(named) == 1 else None


def reranked(
    scored: Sequence[tuple[str, float]],
    before: Mapping[str, str],
    speaker_of: Mapping[str, str],
    *,
    named: str | None,
    speaker_bonus: float = 0.0,
    neighbour_share: float = 0.0,
) -> list[str]:
    """The turns of ``scored`` (and the turns said right after them) re-ranked: each turn's
    score plus ``neighbour_share`` of the score of the turn said before it (``before``), plus
    ``speaker_bonus`` when ``named`` said it; equal scores by turn id."""
    score = dict(scored)
    after = {prev: turn for turn, prev in before.items()}
    candidates = set(score) | {after[t] for t in score if t in after}

    def value(turn: str) -> float:
        total = score.get(turn, 0.0) + neighbour_share * score.get(before.get(turn, ""), 0.0)
        if named is not None and speaker_of.get(turn) == named:
            total += speaker_bonus
        return total

    return sorted(candidates, key=lambda turn: (-value(turn), turn))


def _recall(ranks: Sequence[int | None], k: int) -> float:
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks)


def _share(flags: Sequence[bool]) -> float | None:
    return round(sum(flags) / len(flags), 4) if flags else None


def summarize(
    questions: Sequence[QuestionRanks],
    before: Mapping[str, Mapping[str, str]],
    speaker_of: Mapping[str, Mapping[str, str]],
) -> dict[str, Any]:
    """Per category ("1" to "5") and "all": recall per side and depth, the fusion bound at
    10, who said the evidence, the turn before a missed one, and the re-rankings' recall@10
    (``before``/``speaker_of``: per conversation, each turn's previous turn and speaker)."""
    groups: dict[str, list[QuestionRanks]] = {str(c): [] for c in CATEGORIES}
    for q in questions:
        groups[str(q.category)].append(q)
    groups["all"] = list(questions)
    return {name: _category(group, before, speaker_of) for name, group in groups.items()}


def _category(
    group: Sequence[QuestionRanks],
    before: Mapping[str, Mapping[str, str]],
    speaker_of: Mapping[str, Mapping[str, str]],
) -> dict[str, Any]:
    if not group:
        return {"questions": 0}
    recall = {
        side: {f"at_{k}": round(fmean(_recall(q.ranks(side), k) for q in group), 4) for k in DEPTHS}
        for side in SIDES
    }
    # Per evidence turn: whether any fusion of the two sides could put it in the top 10.
    reachable: list[float] = []
    turns_reachable: list[bool] = []
    no_word: list[bool] = []
    by_named: list[bool] = []
    before_above: list[bool] = []
    for q in group:
        words, dense, hybrid = q.ranks("keywords"), q.ranks("embedding"), q.ranks("hybrid")
        flags = [
            w is not None or (d is not None and d <= _K) for w, d in zip(words, dense, strict=True)
        ]
        reachable.append(sum(flags) / len(flags))
        turns_reachable += flags
        no_word += [w is None for w in words]
        if q.named is not None:
            by_named += [speaker_of[q.conversation].get(t) == q.named for t in q.evidence]
        order = [t for t, _ in q.lists["hybrid"]]
        for turn, rank in zip(q.evidence, hybrid, strict=True):
            if rank is None or rank > _K:
                prev = before[q.conversation].get(turn)
                before_rank = rank_of(order, prev) if prev else None
                before_above.append(before_rank is not None and before_rank <= _K)
    reranks: dict[str, float] = {}
    for bonus in (0.0, *SPEAKER_BONUS):
        for share in (0.0, *NEIGHBOUR_SHARE):
            if bonus == 0.0 and share == 0.0:
                continue

            def order_of(q: QuestionRanks, bonus: float = bonus, share: float = share) -> list[str]:
                return reranked(
                    q.lists["hybrid"],
                    before[q.conversation],
                    speaker_of[q.conversation],
                    named=q.named,
                    speaker_bonus=bonus,
                    neighbour_share=share,
                )

            reranks[f"speaker_{bonus}_before_{share}"] = _rerank_recall(group, order_of)
    return {
        "questions": len(group),
        "evidence_turns": len(turns_reachable),
        "recall": recall,
        "fusion_bound_at_10": round(fmean(reachable), 4),
        "evidence_turns_reachable_at_10": _share(turns_reachable),
        "evidence_turns_without_a_keyword": _share(no_word),
        "evidence_said_by_the_named_speaker": _share(by_named),
        "missed_with_the_turn_before_in_top_10": _share(before_above),
        "missed_turns": len(before_above),
        "reranked_recall_at_10": reranks,
    }


def _rerank_recall(
    group: Sequence[QuestionRanks], order_of: Callable[[QuestionRanks], list[str]]
) -> float:
    return round(
        fmean(_recall([rank_of(order_of(q), t) for t in q.evidence], _K) for q in group), 4
    )


async def collect(
    conversations: Sequence[Conversation], depth: int, stamp: str
) -> list[QuestionRanks]:
    """Load each conversation's turns, put every question with evidence to each side at
    ``depth``; the namespaces are dropped after."""
    settings = Settings.from_env({})
    found: list[QuestionRanks] = []
    async with open_clients(settings, CollectorRegistry()) as clients:
        for conversation in conversations:
            namespace = f"eval-locomo-ranks-{stamp}-{conversation.id}"
            try:
                found += await _conversation(
                    _Searcher(clients.store, clients.embedder, settings.api, depth),
                    conversation,
                    namespace,
                )
            finally:
                await clients.store.drop_namespace(namespace)
    return found


@dataclass(frozen=True)
class _Searcher:
    store: FactStore
    embedder: Embedder
    api: ApiSettings
    depth: int


async def _conversation(
    searcher: _Searcher, conversation: Conversation, namespace: str
) -> list[QuestionRanks]:
    materializer = Materializer(searcher.store, searcher.embedder)
    cited = await load_turns(materializer, conversation, namespace)
    turn_of = {fact: turns[0] for fact, turns in cited.items()}
    limit = asyncio.Semaphore(8)

    async def one(question: Question) -> QuestionRanks | None:
        evidence = tuple(t for t in question.evidence if t in conversation.turns)
        if not evidence:
            return None
        async with limit:
            return await _ranks(searcher, conversation, namespace, question, evidence, turn_of)

    found = await asyncio.gather(*(one(q) for q in conversation.questions))
    return [q for q in found if q is not None]


async def _ranks(
    searcher: _Searcher,
    conversation: Conversation,
    namespace: str,
    question: Question,
    evidence: tuple[str, ...],
    turn_of: Mapping[str, str],
) -> QuestionRanks:
    """One question's deep lists on each side, searched as ``search_facts`` searches."""
    store, embedder, api, depth = searcher.store, searcher.embedder, searcher.api, searcher.depth
    request = AskRequest(question.text, namespace, as_of=conversation.end, top_k=_K)
    valid = await resolve_valid_time(request, datetime.now(UTC), True, True, None, {})
    text = valid.search_text
    if api.drop_common_words:
        text = await without_common_words(store, namespace, text, conversation.end)
    vector = await embedder.embed(text)
    keywords = keyword_query(text) if api.keyword_forms else text
    ranks = QuestionRanks(
        conversation.id,
        question.category,
        question.text,
        evidence,
        named_speaker(question.text, conversation.speakers),
        search_text=text,
    )
    for side, alpha in SIDES.items():
        weight = api.alpha if alpha is None else alpha
        # BM25 alone returns only the turns that match a word: all of them, so that a turn
        # absent from its list shares no word with the keyword query.
        deep = len(conversation.turns) if weight == 0.0 else depth
        hits = await store.search(
            namespace,
            keywords,
            vector,
            as_of=conversation.end,
            top_k=deep,
            min_similarity=-1.0 if weight == 0.0 else api.min_similarity,
            alpha=weight,
            valid=valid.interval,
        )
        ranks.lists[side] = [(turn_of[h.fact.fact_id], round(h.score, 6)) for h in hits]
    return ranks


def conversation_maps(
    conversations: Sequence[Conversation],
) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    """Per conversation: each turn's previous turn in its session, and each turn's speaker."""
    before: dict[str, dict[str, str]] = {}
    speaker_of: dict[str, dict[str, str]] = {}
    for c in conversations:
        before[c.id] = {
            s.turns[i].id: s.turns[i - 1].id for s in c.sessions for i in range(1, len(s.turns))
        }
        speaker_of[c.id] = {t.id: t.speaker for t in c.turns.values()}
    return before, speaker_of


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=Path("results/eval"))
    parser.add_argument("--conversations", default="")
    parser.add_argument("--depth", type=int, default=max(DEPTHS))
    args = parser.parse_args(argv)
    wanted = tuple(c for c in args.conversations.split(",") if c)
    conversations = load_locomo(args.data, wanted)
    stamp = f"{datetime.now(UTC):%Y%m%d-%H%M%S}"
    questions = asyncio.run(collect(conversations, args.depth, stamp))
    before, speaker_of = conversation_maps(conversations)
    settings = Settings.from_env({})
    result = {
        "kind": "locomo-ranks",
        "run": stamp,
        "conversations": [c.id for c in conversations],
        "depth": args.depth,
        "retrieval": {
            "alpha": settings.api.alpha,
            "keyword_forms": settings.api.keyword_forms,
            "drop_common_words": settings.api.drop_common_words,
            "bm25_b": settings.store.bm25_b,
            "min_similarity": settings.api.min_similarity,
        },
        "embed_model": settings.embed.model,
        "categories": summarize(questions, before, speaker_of),
        "questions": [
            {
                "conversation": q.conversation,
                "category": q.category,
                "question": q.question,
                "search_text": q.search_text,
                "named": q.named,
                "evidence": list(q.evidence),
                "ranks": {side: q.ranks(side) for side in SIDES},
            }
            for q in sorted(questions, key=lambda q: (q.conversation, q.question))
        ],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"locomo-ranks-{stamp}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    print(path)


if __name__ == "__main__":
    main()
