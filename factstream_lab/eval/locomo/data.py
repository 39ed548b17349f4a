"""LoCoMo as the evaluation reads it: conversations, dated sessions, turns, questions.

One JSON file per conversation (``26.json``; README in the data folder): ``speaker_a`` and
``speaker_b``, ``session_N`` (the turns, each with its ``dia_id`` "D<session>:<turn>", the
speaker, the text and, for a shared photo, ``blip_caption``), ``session_N_date_time``
("1:56 pm on 8 May, 2023", local time without a zone: read as UTC), and ``qa`` (question,
answer, ``evidence`` turn ids, category 1 to 5; an adversarial question has
``adversarial_answer`` and no answer). The other keys (summaries, observations, the
speakers' events) are gold annotations, not inputs, and are not read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from factstream.errors import BadInput

__all__ = [
    "CATEGORIES",
    "Conversation",
    "LocomoInvalid",
    "Question",
    "Session",
    "Turn",
    "load_conversation",
    "load_locomo",
    "parse_session_time",
]

# As numbered in the data (README): 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
# 5 adversarial.
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_SESSION = re.compile(r"session_(?P<n>[0-9]+)")
_TURN_ID = re.compile(r"D(?P<session>[0-9]+):(?P<turn>[0-9]+)")
_TIME_FORMAT = "%I:%M %p on %d %B, %Y"


class LocomoInvalid(BadInput):
    """A LoCoMo file that cannot be read as the format its README describes."""


@dataclass(frozen=True)
class Turn:
    """One turn: its id ("D1:3"), who spoke, what they said, and the caption of a photo
    they shared (the images cannot be fetched; the caption is the usual stand-in)."""

    id: str
    speaker: str
    text: str
    caption: str | None = None

    @property
    def said(self) -> str:
        """What the turn says, a shared photo as its caption: 'Look! [photo: a dog]'."""
        if self.caption is None:
            return self.text
        photo = f"[shares a photo: {self.caption}]"
        return f"{self.text} {photo}" if self.text else photo


@dataclass(frozen=True)
class Session:
    """A dated session: its number, when it took place (UTC), its turns in order."""

    number: int
    time: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    """A question, its gold answer (None for an adversarial one), the turns that support it."""

    text: str
    answer: str | None
    evidence: tuple[str, ...]
    category: int
    adversarial_answer: str | None = None


@dataclass(frozen=True)
class Conversation:
    """One conversation: its id (the file's stem), the two speakers, sessions, questions."""

    id: str
    speakers: tuple[str, str]
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    @cached_property
    def turns(self) -> dict[str, Turn]:
        """Every turn by id."""
        return {turn.id: turn for session in self.sessions for turn in session.turns}

    @cached_property
    def session_of(self) -> dict[str, Session]:
        """The session of each turn, by turn id."""
        return {turn.id: session for session in self.sessions for turn in session.turns}

    @property
    def end(self) -> datetime:
        """The time of its last session."""
        return self.sessions[-1].time

    def sliced(self, sessions: int | None) -> Conversation:
        """The first ``sessions`` sessions (None: all) and their questions (``keep_turns``)."""
        if sessions is None or sessions >= len(self.sessions):
            return self
        return self.keep_turns({t.id for s in self.sessions[:sessions] for t in s.turns})

    def keep_turns(self, ids: set[str]) -> Conversation:
        """Only the turns in ``ids`` (sessions left empty dropped), and the questions whose
        evidence lies wholly in them (a question without evidence is dropped)."""
        sessions = tuple(
            Session(s.number, s.time, kept)
            for s in self.sessions
            if (kept := tuple(t for t in s.turns if t.id in ids))
        )
        questions = tuple(q for q in self.questions if q.evidence and set(q.evidence) <= ids)
        return Conversation(self.id, self.speakers, sessions, questions)


def parse_session_time(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' as that minute in UTC (the data gives no zone).

    Raises:
        LocomoInvalid: the text is not in that form.
    """
    try:
        return datetime.strptime(" ".join(text.split()), _TIME_FORMAT).replace(tzinfo=UTC)
    except ValueError as exc:
        raise LocomoInvalid(f"session time {text!r} is not like '1:56 pm on 8 May, 2023'") from exc


def evidence_ids(raw: Sequence[object]) -> tuple[str, ...]:
    """The turn ids of a question's evidence, in order, each once.

    An entry may hold several ids ('D8:6; D9:17'); anything that is not an id is dropped.
    """
    found: list[str] = []
    for entry in raw:
        for match in _TURN_ID.finditer(str(entry)):
            ident = f"D{int(match['session'])}:{int(match['turn'])}"
            if ident not in found:
                found.append(ident)
    return tuple(found)


def load_conversation(path: Path) -> Conversation:
    """Read one conversation file.

    Raises:
        LocomoInvalid: not JSON, or a required key is missing or of the wrong type.
    """
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LocomoInvalid(f"{path}: cannot be read as JSON: {exc}") from exc
    if not isinstance(raw, dict):
        raise LocomoInvalid(f"{path}: a conversation is a JSON object")
    try:
        return _conversation(path.stem, raw)
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, LocomoInvalid):
            raise LocomoInvalid(f"{path}: {exc.reason}") from exc
        raise LocomoInvalid(f"{path}: {type(exc).__name__}: {exc}") from exc


def load_locomo(data_dir: Path, only: Sequence[str] | None = None) -> list[Conversation]:
    """The conversations of ``data_dir`` (``*.json``), by id; ``only``: just these ids.

    Raises:
        LocomoInvalid: no conversation file, an id in ``only`` with no file, or a bad file.
    """
    paths = {p.stem: p for p in sorted(data_dir.glob("*.json"))}
    if not paths:
        raise LocomoInvalid(f"{data_dir}: no conversation files (*.json)")
    wanted = list(only) if only else sorted(paths, key=_natural)
    missing = [name for name in wanted if name not in paths]
    if missing:
        raise LocomoInvalid(f"{data_dir}: no conversation {', '.join(missing)}")
    return [load_conversation(paths[name]) for name in wanted]


def _natural(name: str) -> tuple[int, str]:
    return (int(name), name) if name.isdigit() else (1 << 30, name)


def _conversation(name: str, raw: Mapping[str, Any]) -> Conversation:
    speakers = (_text(raw, "speaker_a"), _text(raw, "speaker_b"))
    numbers = sorted(
        int(m["n"]) for key in raw if (m := _SESSION.fullmatch(key)) and isinstance(raw[key], list)
    )
    sessions = tuple(_session(raw, n) for n in numbers if raw[f"session_{n}"])
    if not sessions:
        raise LocomoInvalid("no session has turns")
    questions = tuple(_question(q) for q in raw.get("qa", []))
    return Conversation(name, speakers, sessions, questions)


def _session(raw: Mapping[str, Any], number: int) -> Session:
    key = f"session_{number}_date_time"
    if key not in raw:
        raise LocomoInvalid(f"session {number} has turns but no {key}")
    turns = tuple(_turn(t) for t in raw[f"session_{number}"])
    return Session(number, parse_session_time(_text(raw, key)), turns)


def _turn(raw: Mapping[str, Any]) -> Turn:
    ident = evidence_ids([_text(raw, "dia_id")])
    if len(ident) != 1:
        raise LocomoInvalid(f"turn id {raw['dia_id']!r} is not like 'D1:3'")
    caption = " ".join(str(raw.get("blip_caption") or "").split()) or None
    return Turn(ident[0], _text(raw, "speaker"), " ".join(str(raw["text"]).split()), caption)


def _question(raw: Mapping[str, Any]) -> Question:
    category = raw["category"]
    if not isinstance(category, int) or category not in CATEGORIES:
        raise LocomoInvalid(f"question category {category!r} is not 1 to 5")
    answer = raw.get("answer")
    adversarial = raw.get("adversarial_answer")
    return Question(
        _text(raw, "question"),
        None if answer is None else str(answer),
        evidence_ids(raw.get("evidence") or []),
        category,
        None if adversarial is None else str(adversarial),
    )


def _text(raw: Mapping[str, Any], key: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value.strip():
        raise LocomoInvalid(f"{key!r} is missing or not a non-empty string")
    return value.strip()
