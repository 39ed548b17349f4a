"""Names in a document and the forms under which it may name an entity."""

from __future__ import annotations

from factstream.text.names import (
    aliases,
    document_names,
    document_title,
    leading_name,
    mentions,
)


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


def test_a_title_is_the_documents_own_else_its_source_urls_slug() -> None:
    slug = "https://www.offtheball.com/soccer/connolly-christie-hull-1435982"
    assert document_title("Christie joins Hull", slug) == "Christie joins Hull"
    assert document_title(None, slug) == "Connolly Christie Hull"
    # The last segment with three words or more; numbers and the extension dropped.
    page = "https://example.com/news-175840-olimpia-milan-add-deshaun-thomas.html"
    assert document_title("  ", page) == "News Olimpia Milan Add Deshaun Thomas"
    segments = "https://example.com/world/uk/pm-names-new-cabinet/articleshow/94049219.cms"
    assert document_title(None, segments) == "Pm Names New Cabinet"
    # A section or an id is no headline; a source that is not a URL gives none.
    assert document_title(None, "https://www.bbc.com/news/uk-59135132") is None
    assert document_title(None, "chat with Ana") is None
    assert document_title(None, None) is None
    # Title-cased words name a subject like the text's names do.
    assert mentions("Connolly Christie Hull", "Cyrus Christie")
