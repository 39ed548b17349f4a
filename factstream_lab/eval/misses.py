"""Why the editor's retrieval misses a superseded fact: the categories of an eval's misses.

``python -m factstream_lab.eval.misses RESULTS.json DATA [VARIANT]`` reads an ``eval
update-retrieval --json`` file (the first variant, the configured one, unless named) and
the CLARK-News folder it ran on, and counts, per change the variant missed:

- not seen by the editor: whether the document (its text or its title,
  ``names.document_title``) names the stale fact's subject (``names.mentions``, with
  surnames and acronyms), else its object, else spells out its relation, else none of them;
- seen but not first: whether the KB then held other facts of the same subject (a tie
  among one entity's facts) or not.

The ranks in the file are in the order the eval scores the changes
(``retrieval.scored_changes``).
Files without the per-change ``seen`` take the top ``top_k`` for what the editor sees
(exact when every fact there clears the floor, as for the configured retrieval on
CLARK-News: its "editor sees" equals its recall@10).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from factstream.text.names import document_title, mentions
from factstream_lab.eval.datasets import Change, Clark, load_clark
from factstream_lab.eval.retrieval import closings, scored_changes

__all__ = ["miss_categories"]


def _same_subject_facts(clark: Clark, change: Change, *, edited: bool) -> int:
    """Facts of the stale fact's subject in the KB when the new document arrives, itself out.

    ``edited``: less those an earlier document superseded (closed in that KB).
    """
    position = clark.documents[change.new.document_id].position
    closed = (
        {i for i, doc in closings(clark).items() if doc.position < position} if edited else set()
    )
    return sum(
        1
        for t in clark.triples
        if t.subject == change.stale.subject
        and t.index != change.stale.index
        and t.index not in closed
        and t.document_id in clark.documents
        and clark.documents[t.document_id].position < position
    )


def miss_categories(clark: Clark, result: Mapping[str, Any]) -> Counter[str]:
    """Counts of the categories above for one variant's result."""
    counts: Counter[str] = Counter()
    top_k = result["config"]["top_k"]
    ranks = result["ranks"]
    # Files written before the eval recorded it: what the editor sees is the top top_k.
    seen = result.get("seen") or [r is not None and r <= top_k for r in ranks]
    for change, rank, in_view in zip(scored_changes(clark), ranks, seen, strict=True):
        doc = clark.documents[change.new.document_id]
        text = "\n".join(filter(None, [doc.text, document_title(doc.title, doc.source)]))
        if not in_view:
            if mentions(text, change.stale.subject):
                counts["not seen: document names the subject"] += 1
            elif mentions(text, change.stale.object, short=False):
                counts["not seen: names only the object"] += 1
            elif change.stale.relation.casefold() in text.casefold():
                counts["not seen: spells out only the relation"] += 1
            else:
                counts["not seen: names none of them"] += 1
        elif rank != 1:
            if _same_subject_facts(clark, change, edited=result.get("kb") == "edited"):
                counts["seen, not first: subject has other facts in the KB"] += 1
            else:
                counts["seen, not first: no other fact of the subject"] += 1
    return counts


def main(argv: Sequence[str]) -> None:
    """Print the categories of a results file's misses."""
    results = json.loads(Path(argv[0]).read_text())
    clark = load_clark(Path(argv[1]))
    result = (
        next((r for r in results if r["config"]["name"] == argv[2]), None)
        if argv[2:]
        else results[0]
    )
    if result is None:
        raise SystemExit(f"no variant {argv[2]!r} in {argv[0]}")
    for name, count in sorted(miss_categories(clark, result).items()):
        print(f"{count:4}  {name}")


if __name__ == "__main__":
    main(sys.argv[1:])
