"""Repair the one defect of LM output that is the server's, not the model's: raw control
characters inside JSON strings.

A JSON string may not hold U+0000-U+001F as they are (RFC 8259 section 7); a server whose
grammar lets them through (llama-cpp-python's own schema converter does) returns answers
that every JSON parser refuses ("control character (\\u0000-\\u001F) found while parsing a
string"), though the model said what it meant. :func:`escape_control_characters` escapes
exactly those characters, and only inside strings; anything else wrong with an answer is
left for the retry to fix.
"""

from __future__ import annotations

__all__ = ["escape_control_characters"]

_SHORT = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape_control_characters(text: str) -> str | None:
    """``text`` with every raw control character inside a JSON string escaped; None when
    there is none (the text is returned unchanged by not being returned).

    Outside strings the characters stay (tab, newline and carriage return are JSON
    whitespace there; the others are an error no escaping can mend).
    """
    out: list[str] = []
    in_string = escaped = changed = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            elif char < " ":
                char = _SHORT.get(char) or f"\\u{ord(char):04x}"
                changed = True
        elif char == '"':
            in_string = True
        out.append(char)
    return "".join(out) if changed else None
