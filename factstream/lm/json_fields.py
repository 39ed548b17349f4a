"""The text of a streamed JSON object's top-level string fields, as its pieces arrive.

A constrained answer streams as JSON (``{"reasoning": "...", "answer": "..."}``); a reader
fed each piece says what text each field gained, unescaped, so a client can show the answer
growing without parsing half a document. Anything that is not a top-level string value
(keys, numbers, nested objects) adds nothing.
"""

from __future__ import annotations

__all__ = ["JsonFieldReader"]

_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class JsonFieldReader:
    """Feed it the pieces of one JSON object in order; each ``feed`` returns what was added."""

    def __init__(self) -> None:
        self._depth = 0
        self._in_string = False
        self._role: str | None = None  # "key" or "value" for a top-level string, else None
        self._expect = "key"
        self._key = ""
        self._buffer: list[str] = []  # the key being read
        self._escape: str | None = None  # None, "" after a backslash, or the \\u digits so far
        self._high: int | None = None  # a UTF-16 high surrogate awaiting its low half

    def feed(self, piece: str) -> dict[str, str]:
        """The text each top-level string field gained from ``piece`` (fields in order)."""
        added: dict[str, str] = {}
        for char in piece:
            if self._in_string:
                text = self._string_char(char)
                if text and self._role == "value":
                    added[self._key] = added.get(self._key, "") + text
                elif text and self._role == "key":
                    self._buffer.append(text)
            else:
                self._structure_char(char)
        return added

    def _structure_char(self, char: str) -> None:
        if char in "{[":
            self._depth += 1
            self._expect = "key" if char == "{" and self._depth == 1 else self._expect
        elif char in "}]":
            self._depth -= 1
        elif self._depth == 1 and char == ":":
            self._expect = "value"
        elif self._depth == 1 and char == ",":
            self._expect = "key"
        elif char == '"':
            self._in_string = True
            self._role = self._expect if self._depth == 1 else None
            self._buffer = []

    def _string_char(self, char: str) -> str:
        """The text ``char`` adds to the current string ('' for escapes still open, quotes)."""
        if self._escape is not None:
            return self._escaped(char)
        if char == "\\":
            self._escape = ""
            return ""
        if char == '"':
            self._in_string = False
            if self._role == "key":
                self._key = "".join(self._buffer)
            return ""
        return char

    def _escaped(self, char: str) -> str:
        assert self._escape is not None  # noqa: S101 - only called inside an escape
        if self._escape == "" and char != "u":
            self._escape = None
            return _ESCAPES.get(char, char)
        self._escape += char
        if len(self._escape) < 5:  # "u" and four hex digits
            return ""
        digits, self._escape = self._escape[1:], None
        try:
            code = int(digits, 16)
        except ValueError:  # not JSON: shown as a replacement character
            return "\ufffd"
        if 0xD800 <= code < 0xDC00:
            self._high = code
            return ""
        if 0xDC00 <= code < 0xE000 and self._high is not None:
            code, self._high = 0x10000 + ((self._high - 0xD800) << 10) + (code - 0xDC00), None
        return chr(code)
