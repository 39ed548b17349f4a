"""Names in a document and the forms under which it may name an entity."""

from __future__ import annotations

from factstream.knowledge.names import aliases, document_names, leading_name, mentions


def test_document_names_are_capitalised_runs_in_order_without_repeats() -> None:
    text = "Sen. Jon Bramnick met Mark Emmert, and Mark Emmert left for the Bank of England."
    assert document_names(text) == ["Sen. Jon Bramnick", "Mark Emmert", "Bank of England"]


def test_the_leading_name_skips_sentence_openers() -> None:
    assert leading_name("The Bank of England raised rates.") == "Bank of England"
    assert leading_name("Jo Bloggs is mayor.") == "Jo Bloggs"
    assert leading_name("it rains in Oslo.") is None
    assert leading_name("The council met on Monday.") is None


def test_aliases_add_the_head_the_surname_and_the_acronym() -> None:
    assert "Charles III" in aliases("Charles III of the United Kingdom")
    assert "Catherine" in aliases("Catherine, Princess of Wales")
    assert "Emmert" in aliases("Mark Emmert")
    assert "NCAA" in aliases("National Collegiate Athletic Association")
    assert "Emmert" not in aliases("Mark Emmert", short=False)
    # Short or numeral last words are no surname.
    assert aliases("Mohamed-Ali Cho") == {"Mohamed-Ali Cho"}
    assert "III" not in aliases("Charles III")
    assert "Charles" in aliases("Charles III of the United Kingdom")
    assert "Charles" not in aliases("Charles Darwin")


def test_mentions_match_whole_words_and_capitals() -> None:
    assert mentions("Emmert is the president of the NCAA.", "Mark Emmert")
    assert mentions("Charlie Baker leads the NCAA.", "National Collegiate Athletic Association")
    assert mentions("MEET KICKER BRANDON AUBREY", "Brandon Aubrey")
    assert not mentions("Does not clearly state green fact", "Kate Green")
    assert not mentions("Greenland votes", "Kate Green")
    assert not mentions("anything", None)
