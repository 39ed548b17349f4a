"""The keyword side of a question's hybrid search: its words and their other forms.

BM25 matches words as written: "What did Caroline research?" does not find "Researching
adoption agencies", nor "Where has Melanie camped?" "we went camping". The keyword query
is the question with, after it, the other inflections of each of its words (their lemmas'
forms, from ``lemminflect``'s English tables: "research" adds "researched researching
researches"); the embedding is of the question as asked. A word the tables do not know,
or a name, stays as it is. Words Weaviate drops as stop words ("what", "did") are left
alone here too: they add nothing.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["MAX_FORMS", "keyword_query", "word_forms"]

MAX_FORMS = 8  # forms added per word, at most: a word's inflections are a handful
_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?")
_MIN_LEN = 3  # shorter words are function words or too ambiguous to inflect
_AUXILIARIES = frozenset({"be", "have", "do"})  # their forms are stop words, or as common


@lru_cache(maxsize=4096)
def word_forms(word: str) -> tuple[str, ...]:
    """The other forms of ``word`` (lower case, sorted, the word itself left out): the
    inflections of every lemma it may be a form of; none for a capitalised word (a name)
    or one shorter than three letters; none for the auxiliaries' forms ("did", "has")."""
    if len(word) < _MIN_LEN or not word.islower() or not word.isalpha():
        return ()
    # Imported here: its import and its tables' load (about a second) are paid by the
    # first question that uses it, not by every process that imports the ask path.
    from lemminflect import getAllInflections, getAllLemmas  # noqa: PLC0415

    forms: set[str] = set()
    for lemmas in getAllLemmas(word).values():
        for lemma in lemmas:
            if lemma.lower() in _AUXILIARIES:
                continue
            forms.add(lemma.lower())
            for inflected in getAllInflections(lemma).values():
                forms.update(f.lower() for f in inflected)
    forms.discard(word)
    return tuple(sorted(f for f in forms if f.isalpha()))[:MAX_FORMS]


def keyword_query(text: str) -> str:
    """``text`` followed by the other forms of its words, each once (``word_forms``);
    ``text`` itself when none has another form."""
    words = _WORD.findall(text)
    seen = {w.lower() for w in words}
    added: list[str] = []
    for word in words:
        for form in word_forms(word):
            if form not in seen:
                seen.add(form)
                added.append(form)
    return f"{text} {' '.join(added)}" if added else text
