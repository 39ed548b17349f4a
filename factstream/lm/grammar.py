"""JSON Schema to a GBNF grammar for llama.cpp, and the longest answer a schema admits.

llama-cpp-python's server turns ``response_format {"type": "json_object", "schema": ...}``
into a grammar with its own converter, whose string characters are ``[^"\\]``: a raw
newline or any other control character may go inside a JSON string, and no JSON parser
reads that answer ("control character (\\u0000-\\u001F) found while parsing a string").
So the llama.cpp backend sends the grammar this module writes instead (the ``grammar``
field, which both llama-cpp-python's and llama.cpp's own server read):

- a string character is any character but ``"``, ``\\`` and the control characters
  U+0000-U+001F and U+007F, or one of the two-character escapes ``\\" \\\\ \\/ \\b \\f \\n
  \\r \\t``; ``\\uXXXX`` escapes are left out (the answer writes the character itself), so
  one character of ``maxLength`` is one or two characters of output;
- no whitespace between tokens: the answer is compact JSON, so a model cannot spend its
  budget on blank lines and indentation;
- objects list their properties in the schema's order, with none but the schema's.

Every answer the grammar admits is valid JSON valid against the schema (a subset of the
schema's documents). The keywords read are ``type`` (one or a list), ``properties``,
``required``, ``items`` (a schema, or false after ``prefixItems``), ``prefixItems``,
``minItems``, ``maxItems``, ``minLength``, ``maxLength``, ``pattern`` (anchored, literals,
classes and quantifiers only), ``enum``, ``const``, ``anyOf``, ``oneOf``, ``minimum`` and
``maximum`` (integers); any other constraining keyword raises
:class:`SchemaUnsupported`, so a schema is never enforced by half.

:func:`longest_answer` is the length of the longest answer the grammar admits, in string
characters and punctuation (``None`` when a string, array or number is unbounded): the
basis of each task's completion budget (``factstream.prompts.models.Prompt.budget``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from factstream.errors import LMConfigError

__all__ = ["SchemaUnsupported", "json_schema_grammar", "longest_answer"]

# A JSON string's character: any but the quote, the backslash and the control characters,
# or a two-character escape.
_CHAR = r'[^"\\\x00-\x1F\x7F] | "\\" ["\\/bfnrt]'
_DIGITS = 15
_INTEGER = f'"-"? ("0" | [1-9] [0-9]{{0,{_DIGITS}}})'
_NUMBER = f'{_INTEGER} ("." [0-9]{{1,{_DIGITS}}})? ([eE] [-+]? [0-9]{{1,3}})?'
_INTEGER_CHARS = 2 + _DIGITS
_NUMBER_CHARS = _INTEGER_CHARS + 1 + _DIGITS + 5
# Keywords that describe and constrain nothing.
_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$schema", "$id"})
_READ = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "items", "prefixItems",
        "minItems", "maxItems", "minLength", "maxLength", "pattern", "enum", "const",
        "anyOf", "oneOf", "minimum", "maximum",
    }
)  # fmt: skip
_QUANTIFIER = re.compile(r"\{(\d+)(?:(,)(\d*))?\}")
_MAX_INTEGER_CHOICES = 256


class SchemaUnsupported(LMConfigError):
    """A prompt's schema uses a keyword or a form the grammar cannot enforce."""


def json_schema_grammar(schema: Mapping[str, Any]) -> str:
    """A GBNF grammar whose sentences are compact JSON documents valid against ``schema``.

    Raises:
        SchemaUnsupported: the schema uses a keyword or form the grammar cannot enforce.
    """
    rules = _Rules()
    answer = rules.value(schema, "answer")
    lines = [f"root ::= {answer}", *(f"{name} ::= {body}" for name, body in rules.items())]
    return "\n".join(lines) + "\n"


def longest_answer(schema: Mapping[str, Any]) -> int | None:
    """The length of the longest answer :func:`json_schema_grammar` admits for ``schema``.

    Counted in characters, an escape (``\\n``) as one; None when the schema bounds no
    length (a string without ``maxLength``, an array without ``maxItems``).

    Raises:
        SchemaUnsupported: as :func:`json_schema_grammar`.
    """
    return _longest(schema, "answer")


def _literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") + '"'


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _repeat(rule: str, low: int, high: int | None) -> str:
    """``rule`` repeated ``low`` to ``high`` times (None: no upper bound)."""
    if high is None:
        return f"{rule}{{{low},}}"
    return rule if low == high == 1 else f"{rule}{{{low},{high}}}"


def _checked(schema: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(schema, Mapping) or not schema:
        raise SchemaUnsupported(f"{where}: {schema!r} admits any value; name its type")
    unknown = set(schema) - _READ - _ANNOTATIONS
    if unknown:
        raise SchemaUnsupported(f"{where}: keywords {sorted(unknown)} are not supported")
    if schema.get("type") == "object" and schema.get("additionalProperties", False) is not False:
        raise SchemaUnsupported(f"{where}: an object must set additionalProperties false")
    return schema


def _alternatives(schema: Mapping[str, Any]) -> list[Any] | None:
    """The alternatives of a union schema (anyOf, oneOf, a list of types); None otherwise."""
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return list(schema[key])
    kind = schema.get("type")
    if isinstance(kind, list):
        return [{**schema, "type": k} for k in kind]
    return None


def _array_bounds(schema: Mapping[str, Any], where: str) -> tuple[int, int | None]:
    low, high = int(schema.get("minItems", 0)), schema.get("maxItems")
    prefix = schema.get("prefixItems")
    if prefix is not None and (schema.get("items", True) is not False or low != len(prefix)):
        raise SchemaUnsupported(f"{where}: prefixItems need items false and minItems = their count")
    if prefix is None and not isinstance(schema.get("items"), Mapping):
        raise SchemaUnsupported(f"{where}: an array needs an items schema")
    return low, None if high is None else int(high)


class _Rules(dict[str, str]):
    """The named rules of a grammar; a body written twice is one rule."""

    def add(self, name: str, body: str) -> str:
        for existing, known in self.items():
            if known == body:
                return existing
        base = re.sub(r"[^a-zA-Z0-9]+", "-", name).strip("-")
        key, n = base, 1
        while key in self or key == "root":
            n += 1
            key = f"{base}{n}"
        self[key] = body
        return key

    def value(self, schema: Any, where: str) -> str:
        schema = _checked(schema, where)
        if "const" in schema:
            return _literal(_json(schema["const"]))
        if "enum" in schema:
            return "(" + " | ".join(_literal(_json(v)) for v in schema["enum"]) + ")"
        union = _alternatives(schema)
        if union is not None:
            return (
                "(" + " | ".join(self.value(s, f"{where}-{i}") for i, s in enumerate(union)) + ")"
            )
        match schema.get("type"):
            case "object":
                return self.add(where, self._object(schema, where))
            case "array":
                return self.add(where, self._array(schema, where))
            case "string":
                return self.add(where, self._string(schema, where))
            case "integer":
                return self.add(where, _integer(schema, where))
            case "number":
                return self.add("number", _NUMBER)
            case "boolean":
                return '("true" | "false")'
            case "null":
                return '"null"'
        raise SchemaUnsupported(f"{where}: type {schema.get('type')!r} is not supported")

    def _object(self, schema: Mapping[str, Any], where: str) -> str:
        properties: Mapping[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", ()))
        if not required <= set(properties):
            raise SchemaUnsupported(f"{where}: a required property has no schema")
        parts: list[str] = []
        for key, sub in properties.items():
            pair = f'{_literal(_json(key))} ":" {self.value(sub, f"{where}-{key}")}'
            if key in required:
                parts.append(f'"," {pair}' if parts else pair)
            elif not parts:
                # Optional pairs before the first required one would need every order.
                raise SchemaUnsupported(f"{where}: optional {key!r} before a required property")
            else:
                parts.append(f'("," {pair})?')
        return '"{" ' + " ".join(parts) + ' "}"' if parts else '"{" "}"'

    def _array(self, schema: Mapping[str, Any], where: str) -> str:
        low, high = _array_bounds(schema, where)
        prefix = schema.get("prefixItems")
        if prefix is not None:
            entries = [self.value(s, f"{where}-{i}") for i, s in enumerate(prefix)]
            return '"[" ' + ' "," '.join(entries) + ' "]"' if entries else '"[" "]"'
        if high == 0:
            return '"[" "]"'
        item = self.value(schema["items"], f"{where}-item")
        more = None if high is None else high - 1
        rest = _repeat(f'("," {item})', max(low - 1, 0), more)
        body = item if more == 0 else f"{item} {rest}"
        return f'"[" {body} "]"' if low >= 1 else f'"[" ({body})? "]"'

    def _string(self, schema: Mapping[str, Any], where: str) -> str:
        if "pattern" in schema:
            if "minLength" in schema or "maxLength" in schema:
                raise SchemaUnsupported(f"{where}: pattern with minLength or maxLength")
            atoms = _pattern(schema["pattern"], where)
            return '"\\"" ' + " ".join(atom for atom, _ in atoms) + ' "\\""'
        char = self.add("char", _CHAR)
        high = schema.get("maxLength")
        low = int(schema.get("minLength", 0))
        return '"\\"" ' + _repeat(char, low, None if high is None else int(high)) + ' "\\""'


def _integer(schema: Mapping[str, Any], where: str) -> str:
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is None and high is None:
        return _INTEGER
    if low is None or high is None or high - low >= _MAX_INTEGER_CHOICES:
        raise SchemaUnsupported(
            f"{where}: an integer needs minimum and maximum, under {_MAX_INTEGER_CHOICES} apart"
        )
    return "(" + " | ".join(f'"{n}"' for n in range(int(low), int(high) + 1)) + ")"


def _pattern(pattern: str, where: str) -> list[tuple[str, int | None]]:
    """An anchored pattern of literals, classes and quantifiers: its atoms as GBNF, each
    with the most characters it matches (None: no bound)."""
    if not (pattern.startswith("^") and pattern.endswith("$")):
        raise SchemaUnsupported(f"{where}: pattern {pattern!r} is not anchored (^...$)")
    body, i = pattern[1:-1], 0
    atoms: list[tuple[str, int | None]] = []
    while i < len(body):
        c = body[i]
        if c == "[":
            end = body.find("]", i + 2)
            if end < 0:
                raise SchemaUnsupported(f"{where}: pattern {pattern!r} has an open class")
            atoms.append((body[i : end + 1], 1))
            i = end + 1
        elif c == "\\" and i + 1 < len(body):
            escaped = body[i + 1]
            if escaped.isalnum() and escaped != "d":  # \w, \s, \b ...: classes not read
                raise SchemaUnsupported(
                    f"{where}: pattern {pattern!r}: \\{escaped} is not supported"
                )
            atoms.append(("[0-9]" if escaped == "d" else _literal(escaped), 1))
            i += 2
        elif c in "{?*+" and atoms:
            match = _QUANTIFIER.match(body, i) if c == "{" else None
            if c == "{" and match is None:
                raise SchemaUnsupported(f"{where}: pattern {pattern!r} has a bad quantifier")
            atom, size = atoms[-1]
            if match is not None:
                most = None if match[2] and not match[3] else int(match[3] or match[1])
                atoms[-1] = (atom + match[0], None if most is None or size is None else most * size)
                i = match.end()
            else:
                atoms[-1] = (atom + c, size if c == "?" else None)
                i += 1
        elif c in "(){}?*+.|^$":
            raise SchemaUnsupported(f"{where}: pattern {pattern!r}: {c!r} is not supported")
        else:
            atoms.append((_literal(c), 1))
            i += 1
    return atoms


def _longest(schema: Any, where: str) -> int | None:
    schema = _checked(schema, where)
    if "const" in schema:
        return len(_json(schema["const"]))
    if "enum" in schema:
        return max(len(_json(v)) for v in schema["enum"])
    union = _alternatives(schema)
    if union is not None:
        return _most([_longest(s, f"{where}-{i}") for i, s in enumerate(union)], max)
    match schema.get("type"):
        case "object":
            properties: Mapping[str, Any] = schema.get("properties", {})
            pairs = [
                _plus(len(_json(key)) + 1, _longest(sub, f"{where}-{key}"))
                for key, sub in properties.items()
            ]
            return _plus(2 + max(len(pairs) - 1, 0), _most(pairs, sum))
        case "array":
            low, high = _array_bounds(schema, where)
            if "prefixItems" in schema:
                entries = [_longest(s, f"{where}-{i}") for i, s in enumerate(schema["prefixItems"])]
                return _plus(2 + max(len(entries) - 1, 0), _most(entries, sum))
            item = _longest(schema["items"], f"{where}-item")
            if high is None or item is None:
                return None
            return 2 + high * item + max(high - 1, 0)
        case "string":
            if "pattern" in schema:
                sizes = [size for _, size in _pattern(schema["pattern"], where)]
                return _plus(2, _most(sizes, sum))
            high = schema.get("maxLength")
            return None if high is None else 2 + int(high)
        case "integer":
            if schema.get("minimum") is None:
                return _INTEGER_CHARS
            return max(len(str(schema["minimum"])), len(str(schema["maximum"])))
        case "number":
            return _NUMBER_CHARS
        case "boolean":
            return 5
        case "null":
            return 4
    raise SchemaUnsupported(f"{where}: type {schema.get('type')!r} is not supported")


def _plus(n: int, size: int | None) -> int | None:
    return None if size is None else n + size


def _most(sizes: list[int | None], combine: Any) -> int | None:
    if any(size is None for size in sizes):
        return None
    return int(combine(sizes)) if sizes else 0
