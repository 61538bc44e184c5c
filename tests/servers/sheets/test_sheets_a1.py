"""A1 notation: what a model writes is read as Google reads it, and written back as Google writes it."""

from __future__ import annotations

import pytest

from mcp_tools.servers.sheets.a1 import A1Error, A1Range, column_letters, column_number, parse, quote_sheet


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A1", A1Range(None, 1, 1, 1, 1)),
        ("b7", A1Range(None, 7, 2, 7, 2)),
        ("$A$1:$C$10", A1Range(None, 1, 1, 10, 3)),
        ("A1:B2", A1Range(None, 1, 1, 2, 2)),
        ("B2:A1", A1Range(None, 1, 1, 2, 2)),
        ("A:C", A1Range(None, None, 1, None, 3)),
        ("2:5", A1Range(None, 2, None, 5, None)),
        ("A2:C", A1Range(None, 2, 1, None, 3)),
        ("A:C5", A1Range(None, 1, 1, 5, 3)),
        ("Sheet1!A1:B2", A1Range("Sheet1", 1, 1, 2, 2)),
        ("Sheet1", A1Range("Sheet1")),
        ("Sales", A1Range("Sales")),
        ("'My Sheet'!A:A", A1Range("My Sheet", None, 1, None, 1)),
        ("'It''s'!A1:B2", A1Range("It's", 1, 1, 2, 2)),
        ("'It''s'", A1Range("It's")),
        ("'A1'!B2", A1Range("A1", 2, 2, 2, 2)),
        ("Q3 Budget!A1", A1Range("Q3 Budget", 1, 1, 1, 1)),
        ("'x!y'!C3", A1Range("x!y", 3, 3, 3, 3)),
        ("ZZZ1", A1Range(None, 1, 18_278, 1, 18_278)),
    ],
)
def test_forms_google_accepts_parse(text: str, expected: A1Range) -> None:
    assert parse(text) == expected


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("", "empty"),
        ("'open!A1", "not closed"),
        ("'Name'A1", "after the quoted sheet name"),
        ("Sheet1!A", "needs a column and a row"),
        ("Sheet1!2:C5", "mixes a whole row with a column"),
        ("Sheet1!A0", "row 0 is outside"),
        ("Sheet1!AAAA1", "is not a cell"),
        ("A1:B99999999", "row 99999999 is outside"),
        ("Sheet1!A1:B2:C3", "is not a cell"),
        ("x" * 101 + "!A1", "1 to 100 characters"),
        ("'tab\tname'!A1", "control characters"),
    ],
)
def test_malformed_ranges_say_what_is_wrong(text: str, complaint: str) -> None:
    with pytest.raises(A1Error, match=complaint):
        parse(text)


@pytest.mark.parametrize(
    "text",
    ["Sheet1!A1:B2", "'My Sheet'!A:C", "'It''s'!A1", "2:5", "A2:C", "'A1'!B2", "Data", "'Q3 Budget'", "B7"],
)
def test_notation_round_trips(text: str) -> None:
    assert parse(parse(text).notation()) == parse(text)
    assert parse(text).notation() == text


def test_sheet_names_are_quoted_only_when_needed() -> None:
    assert quote_sheet("Sheet1") == "Sheet1"
    assert quote_sheet("My Sheet") == "'My Sheet'"
    assert quote_sheet("It's") == "'It''s'"
    assert quote_sheet("A1") == "'A1'"  # bare, it would be a cell
    assert quote_sheet("R1C1") == "'R1C1'"


def test_columns_convert_both_ways() -> None:
    for number in (1, 26, 27, 52, 702, 703, 18_278):
        assert column_number(column_letters(number)) == number
    assert column_letters(28) == "AB" and column_number("zz") == 702


def test_open_bounds_close_at_the_grid_and_windows_page_by_rows() -> None:
    whole = parse("Data").clamp(1000, 26)
    assert whole == A1Range("Data", 1, 1, 1000, 26) and whole.notation() == "Data!A1:Z1000"
    assert parse("B:C").clamp(50, 26).notation() == "B1:C50"
    assert parse("3:4").clamp(50, 5).notation() == "A3:E4"
    window = parse("'My Sheet'!B2:D").clamp(10_000, 26).rows(101, 200)
    assert window.notation() == "'My Sheet'!B101:D200"
    assert parse("A1:A1").single_cell and not parse("A1:B1").single_cell and parse("C3").single_cell
    assert parse("A1:C4").height == 4 and parse("A1:C4").width == 3 and parse("A:C").height is None
