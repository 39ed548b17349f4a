"""The subject check: a document may make false only a fact one of whose entities it names."""

from __future__ import annotations

from fixtures.hits import T

from factstream.edit.about import DocumentNames, check_about, fact_names, fact_office, forms
from factstream.topics.records import Fact, HistoryEntry

CREIGHTON = (
    "INDIANAPOLIS, IN - JANUARY 16: Creighton Bluejays guard Alex O’Connell (5) drives "
    "against Butler Bulldogs guard Jair Bolden (52) during the men’s college basketball game."
)


def fact(text: str, subject: str | None = None, obj: str | None = None) -> Fact:
    entry = HistoryEntry(ts=T, truth=True, document_id="seed", edit_id="e-1")
    structure = {"subject": subject, "relation": "r", "object": obj} if subject and obj else {}
    return Fact(
        fact_id="f1",
        namespace="desk",
        text=text,
        truth=True,
        history=[entry],
        first_seen=T,
        last_changed=T,
        **structure,  # type: ignore[arg-type]
    )


def test_a_document_that_names_none_of_the_facts_entities_is_refused() -> None:
    refusal = check_about(fact("Emmert is the president of the NCAA."), CREIGHTON)
    assert refusal is not None and refusal.reason == "not_about"
    assert refusal.names == ("Emmert", "NCAA")
    everton = fact("Everton's resurgence under Sam Allardyce continued.")
    stoke = "Michael O’Neill admits Stoke City are hurting from the Joe Allen-shaped hole."
    assert check_about(everton, stoke) is not None


def test_the_subject_as_written_passes() -> None:
    assert check_about(fact("Emmert is the president of the NCAA."), "Emmert said no.") is None


def test_an_alias_the_entity_index_knows_passes() -> None:
    lawler = fact("Mark Emmert leads the association.", "Mark Emmert", "NCAA")
    assert check_about(lawler, "Emmert stepped down on Friday.") is None  # the surname
    long = fact("x", "National Collegiate Athletic Association", "Indianapolis")
    assert check_about(long, "The NCAA names a new president.") is None  # the acronym
    king = fact("x", "Charles III of the United Kingdom", "Head of the Commonwealth")
    assert check_about(king, "King Charles was proclaimed.") is None  # head, regnal name
    brown = fact("x", "Charles Q. Brown Jr.", "Chief of Staff of the Air Force")
    assert check_about(brown, "Gen. CQ Brown, Jr spoke.") is None  # the name less its suffix


def test_the_object_is_an_entity_the_fact_is_about() -> None:
    home = fact("x", "Catherine, Princess of Wales", "Kensington Palace")
    text = "The Duke and Duchess of Cambridge are moving from Kensington Palace."
    assert check_about(home, text) is None
    assert check_about(home, "The Duke and Duchess of Cambridge are moving.") is not None


def test_names_are_compared_folded() -> None:
    oconnell = fact("x", "Alex O'Connell", "Stockton Kings")
    assert check_about(oconnell, CREIGHTON) is None  # a curly apostrophe
    cho = fact("x", "Mohamed-Ali Cho", "Real Sociedad")
    assert check_about(cho, "What happened to Mohamed Ali Cho?") is None  # a hyphen
    assert check_about(cho, "MOHAMED ALI CHO JOINS NICE") is None  # several words, any case
    accented = fact("Esmir Bajraktarević signed.")
    assert check_about(accented, "Bajraktarevic scored twice.") is None


def test_a_one_word_form_keeps_its_capital() -> None:
    good = fact("Bob Good chairs the Freedom Caucus.")
    assert check_about(good, "It was a good day for the caucus.") is not None
    assert check_about(good, "Good lost the primary.") is None


def test_the_title_and_else_the_source_slug_count() -> None:
    lyster = fact("x", "Maggie Coles-Lyster", "Zaaf Cycling Team")
    text = "The Canadian champion found a new home."
    assert check_about(lyster, text) is not None
    slug = "https://www.cyclingnews.com/features/maggie-coles-lysters-comeback-campaign/"
    assert check_about(lyster, text, source=slug) is None  # a slug keeps a possessive's s
    assert check_about(lyster, text, title="Coles-Lyster signs for 2023") is None
    # A title given, the slug is not read.
    assert check_about(lyster, text, title="A new home", source=slug) is not None


def test_a_fact_that_names_nothing_is_not_checked() -> None:
    mayor = fact("The mayor is person 3.")
    assert fact_names(mayor) == ()
    assert check_about(mayor, "Line 4 opened.") is None


def test_common_words_and_lower_case_heads_are_no_names() -> None:
    assert forms("This") == ()
    assert " member " not in forms("member of the Virginia House of Delegates")
    assert forms("autimatic") == ()
    assert forms("autimatic", subject=True) == (" autimatic ",)  # a handle as subject
    assert forms("B", subject=True) == ()  # one letter names nothing ("B is true.")
    implied = fact("This article implied that Amari Burney is a member of the Florida Gators.")
    assert fact_names(implied) == ("Amari Burney", "Florida Gators")


def test_a_roles_title_is_named_by_its_proper_part() -> None:
    realm = fact("x", "realm of the Netherlands", "Willem-Alexander")
    assert check_about(realm, "The Netherlands celebrated.") is None
    seat = fact("x", "Ann Roe", "Member of the Ohio Senate")
    assert " Ohio " in forms("Member of the Ohio Senate")  # its kind-less head
    assert check_about(seat, "An Ohio lawmaker resigned on Monday.") is None
    assert check_about(seat, "A Texas lawmaker resigned on Monday.") is not None
    # A name that is its own keeps its " of ": "Bank of America" is not named "America".
    assert " America " not in forms("Bank of America")


def test_an_organisation_is_named_without_the_words_of_its_kind() -> None:
    studio = fact("x", "Pixel Forge Interactive", "Ada Lin")
    assert check_about(studio, "Pixel Forge names a new chief.") is None
    assert check_about(studio, "A games studio names a new chief.") is not None
    assert forms("Apple Inc.") == (" Apple ", " Apple Inc ")


def test_a_lone_word_of_a_kind_or_a_role_names_nothing() -> None:
    # "Group" (a surname by shape) and "Member" would name every group and member.
    assert " Group " not in forms("Independent Senators Group")
    assert " Member " not in forms("Member of the Ohio Senate")
    group = fact("x", "Independent Senators Group", "Yuen Pau Woo")
    assert check_about(group, "The Group of Seven met on Friday.") is not None
    assert forms("Congress", subject=True) == (" Congress ",)  # a subject as written counts


def office_fact(subject: str, relation: str, obj: str) -> Fact:
    entry = HistoryEntry(ts=T, truth=True, document_id="seed", edit_id="e-1")
    return Fact(
        fact_id="f1",
        namespace="desk",
        text=f"{subject} {relation} {obj}.",
        truth=True,
        history=[entry],
        first_seen=T,
        last_changed=T,
        subject=subject,
        relation=relation,
        object=obj,
    )


def test_an_office_is_named_by_its_role_noun() -> None:
    tuvalu = office_fact("Tuvalu", "head of state", "Elizabeth II")
    assert check_about(tuvalu, "For 14 countries the King is head of state.") is None
    assert check_about(tuvalu, "It was the start of the monarch's reign.") is None
    chair = office_fact("Independent Senators Group", "chairperson", "Yuen Pau Woo")
    assert check_about(chair, "Raymonde Saint-Germain became the group's new chair.") is None
    # Unstructured: the office is read from the fact's text.
    unstructured = fact("Tuvalu's head of state is Elizabeth II.")
    assert check_about(unstructured, "Long live the King.") is None
    assert fact_office(unstructured) == "head of state"
    assert fact_office(tuvalu) == "head of state"


def test_a_role_noun_another_name_qualifies_names_that_ones_office() -> None:
    ceo = office_fact("Twitch Interactive", "chief executive officer", "Emmett Shear")
    assert check_about(ceo, "Harambee CEO Maryana Iskander spoke.") is not None
    assert check_about(ceo, "She is chief executive of the Wikimedia Foundation.") is not None
    chair = office_fact("Independent Senators Group", "chairperson", "Yuen Pau Woo")
    assert check_about(chair, "He is chairman of Intermediate Capital Group plc.") is not None
    tuvalu = office_fact("Tuvalu", "head of state", "Elizabeth II")
    assert check_about(tuvalu, "Joel King crossed for Lachlan Wales.") is not None
    assert check_about(tuvalu, "The Queen is head of state.") is None


def test_a_role_noun_names_no_fact_of_another_relation() -> None:
    team = office_fact("Alex O'Connell", "member of sports team", "Creighton Bluejays")
    assert check_about(team, "The chairman and the King watched the game.") is not None
    assert fact_office(team) is None
    tuvalu = office_fact("Tuvalu", "head of state", "Elizabeth II")
    assert DocumentNames("The King is head of state.").about(tuvalu, offices=False) is not None


QUEEN = "The Queen is head of state of 16 countries that are a part of the Commonwealth realm."


def test_a_document_that_states_the_fact_may_not_make_it_false() -> None:
    """The demo's document restating a fact invalidated it "as a correction": a document
    that says the fact word for word asserts it (accents, punctuation and case aside)."""
    doc = f"LONDON - {QUEEN.upper()} These include Australia, Canada and New Zealand."
    refusal = check_about(fact(QUEEN, "The Queen", "16 countries"), doc)
    assert refusal is not None and refusal.reason == "restated"
    assert refusal.names == (QUEEN,)


def test_a_document_that_changes_the_fact_is_not_restating_it() -> None:
    doc = "The Queen is head of state of 15 countries that are a part of the Commonwealth realm."
    assert check_about(fact(QUEEN, "The Queen", "16 countries"), doc) is None


def test_a_short_fact_found_inside_a_document_is_not_a_restatement() -> None:
    assert not DocumentNames("Acme hired Bo. Acme fired Bo.").states("Acme fired")
    assert DocumentNames("Yes: Acme fired Bo Lind on Monday.").states("Acme fired Bo Lind.")
