"""The demo's summary: outcomes with the dead letters' causes, the LM's invalid answers and
tokens by task, the results file's rows; and the demo process logs to a file only."""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from factstream.metrics import LMMetrics
from factstream.ops.dead_letters import Letter
from factstream.topics.records import DeadLetter
from factstream_lab.demo.run import DEFAULT_DEMO_DATA, log_to_file
from factstream_lab.demo.story import figures_markdown
from factstream_lab.demo.summary import (
    LMFigures,
    dead_letter_json,
    lm_figures_from_metrics,
    lm_line,
    outcome_line,
)


def letter(offset: int, reason: str, error_type: str) -> Letter:
    record = DeadLetter(
        topic="factstream.documents",
        partition=0,
        offset=offset,
        key=base64.b64encode(b"demo").decode(),
        value=base64.b64encode(b'{"id": "d%d"}' % offset).decode(),
        reason=reason,
        error_type=error_type,
        failed_at=datetime(2026, 11, 29, tzinfo=UTC),
    )
    return Letter(0, offset, record)


INVALID = "LM output invalid: extract_facts.v2: no valid output after 3 attempt(s); last: x"
LETTERS = [
    letter(3, INVALID, "LMOutputInvalid"),
    letter(7, INVALID, "LMOutputInvalid"),
    letter(9, "value is not valid JSON: unexpected character", "BadInput"),
]


def test_the_outcome_line_gives_every_outcome_and_the_dead_letters_causes() -> None:
    outcomes = {"dead_letter": 3, "empty": 4, "applied": 29, "duplicate": 0}
    assert outcome_line(outcomes, LETTERS) == (
        "Documents: 29 applied, 4 empty (nothing to change), 3 dead-lettered (LM output "
        "invalid (extract_facts.v2) 2, bad input: value is not valid JSON 1)."
    )
    assert outcome_line({}, []) == "Documents: none processed."
    assert dead_letter_json(LETTERS)[0] == {
        "ref": "0:3",
        "document_id": "d3",
        "cause": "LM output invalid (extract_facts.v2)",
        "reason": INVALID,
    }


def _metrics() -> str:
    registry = CollectorRegistry()
    lm = LMMetrics.create(registry)
    lm.requests.labels("extract_facts", "m", "ok").inc(40)
    lm.requests.labels("classify_facts", "m", "ok").inc(58)
    lm.requests.labels("classify_facts", "m", "cached").inc(2)
    lm.requests.labels("extract_facts", "m", "invalid_output").inc(2)  # among the 40 ok
    lm.invalid_outputs.labels("extract_facts", "m", "cut_off").inc(1)
    lm.invalid_outputs.labels("extract_facts", "m", "check").inc(1)
    lm.repaired.labels("extract_facts", "m", "control_characters").inc(3)
    lm.tokens.labels("extract_facts", "m", "completion").inc(3000)
    lm.tokens.labels("classify_facts", "m", "completion").inc(1000)
    lm.tokens.labels("classify_facts", "m", "prompt").inc(9000)
    return generate_latest(registry).decode()


def test_the_lm_figures_are_read_by_task() -> None:
    figures = lm_figures_from_metrics(_metrics())
    assert figures.calls == {"classify_facts": 60, "extract_facts": 40}
    assert figures.invalid == {"extract_facts": {"check": 1, "cut_off": 1}}
    assert figures.repaired == {"extract_facts": 3}
    assert figures.completion_tokens == {"classify_facts": 1000, "extract_facts": 3000}
    saved = figures.to_json(documents=40)
    assert saved["invalid_share"] == 0.02 and saved["completion_tokens_per_document"] == 100.0
    assert lm_line(figures, 40) == (
        "LM: 100 answers, 2 invalid (2.0%: extract_facts check 1, cut_off 1), 3 repaired; "
        "4,000 tokens generated, 100 a document."
    )
    assert lm_line(LMFigures(), 40) == "LM: no calls counted."


def test_the_results_table_has_the_new_rows_when_the_file_has_them() -> None:
    figures = {
        "model": "m",
        "documents": 40,
        "data": "d.jsonl",
        "seconds": 10,
        "timings": {},
        "facts": 1,
        "facts_true": 1,
        "edits_by_op": {},
        "document_outcomes": {"applied": 37, "dead_letter": 3},
        "dead_letter_causes": {"LM output invalid (extract_facts.v2)": 2},
        "worker_lm": lm_figures_from_metrics(_metrics()).to_json(40),
        "story": {"grounding": None, "change": None},
        "audit": {"flagged_documents": 0, "documents_with_kept_facts": 1, "kept_facts": 1},
    }
    table = figures_markdown(figures)
    assert "| dead letters by cause | LM output invalid (extract_facts.v2) 2 |" in table
    assert "| invalid LM answers | 2 of 100 calls (2.0%): extract_facts check 1, cut_off 1 |" in (
        table
    )
    assert "| tokens generated | 4000 (100.0 a document) |" in table


@pytest.fixture
def root_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)
    logging.captureWarnings(False)


def test_library_warnings_go_to_the_log_file_not_the_terminal(
    tmp_path: Path, root_logging: None, capfd: pytest.CaptureFixture[str]
) -> None:
    path = log_to_file(tmp_path / "logs" / "demo.log")
    logging.getLogger("aiokafka.producer.sender").warning(
        "Got error produce response: NotLeaderForPartitionError"
    )
    for handler in logging.getLogger().handlers:
        handler.flush()
    assert "NotLeaderForPartitionError" in path.read_text()
    out, err = capfd.readouterr()
    assert "NotLeaderForPartition" not in out + err


def test_the_default_demo_data_is_there() -> None:
    assert DEFAULT_DEMO_DATA.is_file()
