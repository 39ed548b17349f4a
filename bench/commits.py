"""The busy benchmark's commit timeline (issue 18): where a window's time goes.

Commits go in input order, one document at a time, so a run's time is the sum of the gaps
between consecutive commits. The worker logs each commit (``outcome <topic>[p]@offset``)
with its time, each wait of a document for an earlier one's commit (agents/dependencies.py)
and each early re-decision (agents/speculation.py). The gap before a document's commit is
filed by what the document did: waited for the one just before it (``waited_1``), for one
2 to 4 before it, for one farther away, or for none; ``+redecided`` when it was also decided
again early. A document that neither waited nor was decided again was ready before its
turn: its gap is the commit's own time (the check, one Kafka transaction, the apply), which
no window overlaps.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from bench.chains import chain_seconds
from factstream.topics.records import Document
from factstream_lab.provenance import stamped

__all__ = ["commit_figures", "commit_gaps", "commit_requests", "commit_steps", "commit_times"]

_OUTCOME = re.compile(
    r"^\[(?P<at>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\].*? outcome \S+\[(?P<p>\d+)\]@(?P<o>\d+) ",
    re.MULTILINE,
)
_AGAIN = re.compile(r"decide '(?P<doc>[^']+)' again")
_STEPS = re.compile(r" commit '(?P<doc>[^']+)' steps (?P<steps>.*)$", re.MULTILINE)
_REQUESTS = re.compile(r" commit '(?P<doc>[^']+)' requests (?P<counts>.*)$", re.MULTILINE)


def commit_times(log: str, documents: int) -> list[float]:
    """The commit times (epoch seconds) of the last ``documents`` records of the partition
    that committed most, in offset order (the timed documents, after any warm-up)."""
    by_partition: dict[int, dict[int, float]] = defaultdict(dict)
    for match in _OUTCOME.finditer(log):
        at = datetime.strptime(match["at"], "%Y-%m-%d %H:%M:%S,%f").timestamp()
        by_partition[int(match["p"])][int(match["o"])] = at
    if not by_partition:
        return []
    commits = max(by_partition.values(), key=len)
    return [commits[offset] for offset in sorted(commits)][-documents:]


def _kind(distance: int | None, again: bool) -> str:
    if distance is None:
        kind = "no_wait"
    elif distance == 1:
        kind = "waited_1"
    else:
        kind = "waited_2_4" if distance <= 4 else "waited_5_plus"
    return f"{kind}+redecided" if again else kind


def commit_gaps(log: str, docs: Sequence[Document], waits: dict[str, int]) -> dict[str, Any]:
    """The gaps before each commit (the first document's aside), by what the document did,
    and the commit's own time (the median gap of documents that neither waited nor were
    decided again; None without one). Empty when the log lacks a commit of some document."""
    times = commit_times(log, len(docs))
    if len(times) != len(docs) or len(docs) < 2:
        return {}
    again = Counter(_AGAIN.findall(log))
    gaps: dict[str, list[float]] = defaultdict(list)
    for position in range(1, len(docs)):
        doc = docs[position].id
        gaps[_kind(waits.get(doc), again[doc] > 0)].append(times[position] - times[position - 1])
    by_kind = {
        kind: {
            "documents": len(g),
            "seconds": round(sum(g), 2),
            "mean_s": round(statistics.mean(g), 3),
            "median_s": round(statistics.median(g), 3),
        }
        for kind, g in sorted(gaps.items(), key=lambda kv: -sum(kv[1]))
    }
    ready = gaps.get("no_wait")
    return {
        "seconds": round(times[-1] - times[0], 2),
        "by_kind": by_kind,
        "commit_s": round(statistics.median(ready), 3) if ready else None,
    }


def commit_steps(log: str, docs: Sequence[Document]) -> dict[str, Any]:
    """Where a commit's own time goes: per step the worker logs for each commit
    (agents/window.py: the applied check, the candidates' re-check, the Kafka transaction,
    the apply's reads, embedding, writes, facts published and batch recorded, the ack), the
    commits that took it, its median and its total seconds, over the timed documents."""
    wanted = {doc.id for doc in docs}
    per_step: dict[str, list[float]] = defaultdict(list)
    totals: list[float] = []
    for match in _STEPS.finditer(log):
        if match["doc"] not in wanted:
            continue
        steps = dict(pair.split("=", 1) for pair in match["steps"].split())
        for step, seconds in steps.items():
            per_step[step].append(float(seconds))
        # ``wait_*``: the committer waiting (for a decision, for its turn), not committing.
        totals.append(sum(float(v) for k, v in steps.items() if not k.startswith("wait_")))
    if not totals:
        return {}
    return {
        "commits": len(totals),
        "median_s": round(statistics.median(totals), 4),
        "seconds": round(sum(totals), 2),
        "by_step": {
            step: {
                "commits": len(v),
                "median_s": round(statistics.median(v), 4),
                "seconds": round(sum(v), 2),
            }
            for step, v in sorted(per_step.items(), key=lambda kv: -sum(kv[1]))
        },
    }


def commit_requests(log: str, docs: Sequence[Document]) -> dict[str, Any]:
    """What a commit asks of the services, in units the machine's load does not move
    (factstream/tally.py): per kind (Weaviate reads and writes, texts embedded by the
    model or found cached, Kafka requests) the commits that made any, the mean and the
    median per commit over all commits, and the total, over the timed documents."""
    wanted = {doc.id for doc in docs}
    rows: list[dict[str, int]] = []
    for match in _REQUESTS.finditer(log):
        if match["doc"] not in wanted:
            continue
        pairs = (pair.split("=", 1) for pair in match["counts"].split())
        rows.append({kind: int(n) for kind, n in pairs})
    if not rows:
        return {}
    kinds = sorted({kind for row in rows for kind in row})
    weaviate = [row.get("weaviate_read", 0) + row.get("weaviate_write", 0) for row in rows]
    return {
        "commits": len(rows),
        "weaviate_per_commit": round(statistics.mean(weaviate), 3),
        "by_kind": {
            kind: {
                "commits": sum(1 for row in rows if row.get(kind)),
                "per_commit": round(statistics.mean(row.get(kind, 0) for row in rows), 3),
                "median": statistics.median(row.get(kind, 0) for row in rows),
                "total": sum(row.get(kind, 0) for row in rows),
            }
            for kind in kinds
        },
    }


def commit_figures(
    log: str, docs: Sequence[Document], waits: dict[str, int], window: int, latency_s: float
) -> dict[str, Any]:
    """``commit_gaps``, and for a window over 1 the chain bound counting the commit's own
    time (bench/chains.py)."""
    figures = commit_gaps(log, docs, waits)
    figures["steps"] = commit_steps(log, docs)
    figures["requests"] = commit_requests(log, docs)
    commit_s = figures.get("commit_s")
    if window > 1 and commit_s:
        chain_s = chain_seconds(docs, waits, latency_s, commit_s)
        figures["chain_bound_with_commits_docs_per_s"] = round(len(docs) / chain_s, 3)
    return figures


def main() -> None:
    """``python -m bench.commits RESULTS WORKDIR``: the commit figures of a busy run whose
    results file predates them, from the worker logs it left in WORKDIR (the benchmark's
    temporary folder, ``busy-w<W>-<policy>/worker-*.log``), written beside RESULTS as
    ``<stamp>-commits.json``."""
    import json
    import sys
    from pathlib import Path

    from bench.chains import waits_in
    from bench.corpus import load, stream_documents

    results, workdir = Path(sys.argv[1]), Path(sys.argv[2])
    busy = json.loads(results.read_text())["benchmarks"]["busy"]
    docs = stream_documents(load(), busy["documents"], [busy["namespace"]])
    latency_s = busy["lm_latency_ms"] / 1000
    out: dict[str, Any] = {"results": results.name, "runs": {}}
    for window, run in busy["runs"].items():
        folder = workdir / f"busy-w{window}-{run['dependencies']}"
        log = "".join(p.read_text(errors="replace") for p in sorted(folder.glob("worker-*.log")))
        out["runs"][window] = commit_figures(log, docs, waits_in(log), int(window), latency_s)
    path = results.with_name(f"{results.stem}-commits.json")
    path.write_text(json.dumps(stamped(out), indent=2) + "\n")
    print(path)


if __name__ == "__main__":
    main()
