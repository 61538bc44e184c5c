"""How notes search orders what it finds: the note a person obviously means comes first."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_tools.core.tooling import Environment
from mcp_tools.servers.notes.config import NotesConfig
from mcp_tools.servers.notes.markdown import plain_title
from mcp_tools.servers.notes.models import SearchArgs
from mcp_tools.servers.notes.service import NotesService
from tests.harness import connect, ok
from tests.servers.notes.fixtures import notes_settings, wait_indexed

pytestmark = pytest.mark.anyio

LONG_SECTION = "Dataview queries turn metadata into tables. " * 30

# A vault where the obvious note is short and many long notes repeat the query in their title and body.
RANKING_VAULT: dict[str, str] = {
    "Plugins/dataview.md": "---\naliases: [Dataview]\n---\n# Dataview\n\nComplex data views for the data-obsessed.\n",
    "Plugins/templater-obsidian.md": "---\naliases: [Templater]\n---\n# Templater\n\nCreate and use templates.\n",
    "Concepts/PARA.md": "# PARA\n\nProjects, areas, resources, archives: a way to file everything.\n",
    "Concepts/Maps of Content (MOC).md": "---\naliases: [MOC, MOCs]\n---\n# Maps of Content\n\nHub notes.\n",
    "Concepts/Spaced repetition.md": "# Spaced repetition\n\nReview flashcards at growing intervals.\n",
    "Plugins/obsidian-spaced-repetition.md": "# Spaced Repetition\n\nA plugin for flashcards.\n",
    "Guides/An Introduction to Dataview.md": (
        "# An Introduction to [[Plugins/dataview|Dataview]]\n\n"
        + "".join(f"## Part {i}\n\n{LONG_SECTION}\n\n" for i in range(12))
    ),
    "Roundup/2022-03-05 Dataview Tips.md": "# Dataview Tips, Dataview Tricks\n\n" + LONG_SECTION * 3,
    "Roundup/2021-05-08 Templater and Sync.md": "# Templater, Syncthing\n\n" + ("Templater scripts. " * 80),
    "Guides/Knowledge Management.md": "# Knowledge Management\n\nThe PARA method and the PARA way of filing. " * 5,
    "Guides/Data.md": "# **Data** and `views`\n\nNothing about obsessions.\n",
}


@pytest.fixture
def ranking_vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for name, text in RANKING_VAULT.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def service(tmp_path: Path, ranking_vault: Path):
    service = NotesService(NotesConfig(vault=str(ranking_vault), watch=False), Environment(tmp_path, tmp_path / "s"))
    service.reconcile()
    yield service
    service.close()


def paths(service: NotesService, query: str, **extra) -> list[str]:
    return [hit.path for hit in service.search(SearchArgs(query=query, **extra)).results]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Dataview", "Plugins/dataview.md"),  # file name and alias, against long notes with it in every chunk
        ("dataview", "Plugins/dataview.md"),  # names compare without case
        ("Templater", "Plugins/templater-obsidian.md"),  # title and alias
        ("templater-obsidian", "Plugins/templater-obsidian.md"),  # file name
        ("MOC", "Concepts/Maps of Content (MOC).md"),  # alias
        ("Maps of Content (MOC)", "Concepts/Maps of Content (MOC).md"),  # file name with punctuation
    ],
)
def test_a_notes_own_name_puts_it_first(service: NotesService, query: str, expected: str) -> None:
    assert paths(service, query)[0] == expected


def test_a_name_inside_the_query_still_counts(service: NotesService) -> None:
    # "PARA method": the note named PARA beats a long guide that says "PARA method" many times
    assert paths(service, "PARA method")[0] == "Concepts/PARA.md"


def test_the_file_name_decides_between_notes_with_the_same_title(service: NotesService) -> None:
    # both notes are titled "Spaced repetition"; only one is called that in links ([[Spaced repetition]])
    found = paths(service, "Spaced repetition")
    assert found[:2] == ["Concepts/Spaced repetition.md", "Plugins/obsidian-spaced-repetition.md"]


def test_names_do_not_outweigh_the_body_for_a_description(service: NotesService) -> None:
    # "Data.md" shares words with the query in its name, but is not part of the query nor the query of it
    assert paths(service, "complex data views for the data-obsessed")[0] == "Plugins/dataview.md"


def test_one_result_per_note_with_its_best_passages(service: NotesService) -> None:
    result = service.search(SearchArgs(query="Dataview queries metadata", top_k=10))
    found = [hit.path for hit in result.results]
    assert len(found) == len(set(found))
    guide = next(hit for hit in result.results if hit.path == "Guides/An Introduction to Dataview.md")
    assert guide.heading.startswith("An Introduction to Dataview > Part") and guide.snippet
    assert len(guide.more) == 2 and all("> Part" in p.heading and p.snippet for p in guide.more)


def test_filters_apply_to_name_matches(service: NotesService) -> None:
    assert "Plugins/dataview.md" not in paths(service, "Dataview", folder="Guides")


@pytest.mark.parametrize(
    ("raw", "plain"),
    [
        ("An Introduction to [[dataview|Dataview]]", "An Introduction to Dataview"),
        ("About [[Projects/Alpha]] and [[Beta#Goals]]", "About Alpha and Beta"),
        ("See [the docs](https://example.org) **now**", "See the docs now"),
        ("`code` ==marked== ~~gone~~ __bold__", "code marked gone bold"),
        ("Plain title", "Plain title"),
    ],
)
def test_titles_are_plain_text(raw: str, plain: str) -> None:
    assert plain_title(raw) == plain


async def test_search_results_show_plain_titles(tmp_path: Path, ranking_vault: Path) -> None:
    async with connect(tmp_path, notes_settings(ranking_vault)) as client:
        await wait_indexed(client)
        guide = ok(await client.call_tool("notes_search", {"query": "Introduction to Dataview"}))
        data = ok(await client.call_tool("notes_search", {"query": "obsessions"}))
    assert guide["results"][0]["path"] == "Guides/An Introduction to Dataview.md"
    assert guide["results"][0]["title"] == "An Introduction to Dataview"
    assert [(hit["path"], hit["title"]) for hit in data["results"]] == [("Guides/Data.md", "Data and views")]
