"""JSON Schemas of the wire records, generated from the models and shipped in the package.

The records are the value models of the topics in ``definitions.TOPICS`` (declared there
once); each gets ``schemas/<name>.schema.json``, named after its class in kebab case
(``FactEdit``: ``fact-edit``). `python -m factstream.topics.schemas` rewrites the files; a unit
test fails when they drift from the models.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from factstream.topics.definitions import TOPICS
from factstream.topics.records import Record

__all__ = ["RECORDS", "SCHEMA_DIR", "json_schema", "render", "schema_name", "write_schemas"]

SCHEMA_DIR = Path(__file__).parent / "schemas"


def schema_name(model: type[Record]) -> str:
    """The schema file's stem for ``model``: its class name in kebab case."""
    return re.sub(r"(?<!^)(?=[A-Z])", "-", model.__name__).lower()


# Derived, never listed: a topic's record gets its schema by being declared in TOPICS.
RECORDS: dict[str, type[Record]] = {schema_name(spec.value): spec.value for spec in TOPICS.values()}


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
