"""JSON Schemas of the wire records, generated from the models and shipped in the package.

`python -m factstream.topics.schemas` rewrites the files in ``schemas/``; a unit test fails
when they drift from the models.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from factstream.topics.records import Answer, DeadLetter, Document, Fact, FactEdit, Question, Record

__all__ = ["SCHEMA_DIR", "RECORDS", "json_schema", "render", "write_schemas"]

SCHEMA_DIR = Path(__file__).parent / "schemas"
RECORDS: dict[str, type[Record]] = {
    "document": Document,
    "fact-edit": FactEdit,
    "fact": Fact,
    "question": Question,
    "answer": Answer,
    "dead-letter": DeadLetter,
}


def json_schema(model: type[Record]) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) a producer or consumer validates against."""
    schema = model.model_json_schema(mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def render(model: type[Record]) -> str:
    """The schema file's exact text."""
    return json.dumps(json_schema(model), indent=2, sort_keys=True) + "\n"


def write_schemas(directory: Path = SCHEMA_DIR) -> list[Path]:
    """Write one ``<name>.schema.json`` per record; returns the paths."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, model in RECORDS.items():
        path = directory / f"{name}.schema.json"
        path.write_text(render(model))
        paths.append(path)
    return paths


if __name__ == "__main__":
    for written in write_schemas():
        print(written)
