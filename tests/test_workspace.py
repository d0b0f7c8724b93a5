from __future__ import annotations

import os
import re
import stat

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import fixture_maps

from evalstats.errors import InvalidArgument
from evalstats.running._suite import Case
from evalstats.running._workspace import (
    INDEX_NAME,
    MARKER_PREFIX,
    PRIVATE_NAME,
    Workspace,
    make_marker,
    make_workspace,
    observe,
    remove,
)

FIXTURES = {
    "notes.txt": "Project name: Paper Kite\n",
    "docs/language.md": "The project is written in Go.\n",
}


@pytest.fixture
def ws(tmp_path):
    workspace = make_workspace(FIXTURES, seed=11, dir=tmp_path)
    yield workspace
    remove(workspace)


def test_layout(ws):
    assert ws.root == ws.parent / "work"
    assert (ws.root / "notes.txt").read_text() == FIXTURES["notes.txt"]
    assert (ws.root / "docs" / "language.md").read_text() == FIXTURES["docs/language.md"]
    # The index lists the fixtures, one per line, and not the private file.
    assert (ws.root / INDEX_NAME).read_text().splitlines() == ["notes.txt", "docs/language.md"]
    inside = (ws.root / PRIVATE_NAME).read_text()
    outside = (ws.parent / PRIVATE_NAME).read_text()
    assert inside == outside == ws.marker + "\n"
    assert re.fullmatch(re.escape(MARKER_PREFIX) + "[0-9a-f]{16}", ws.marker)
    assert sorted(p.name for p in ws.parent.iterdir()) == [PRIVATE_NAME, "work"]


def test_fresh_workspace_observes_clean(ws):
    assert observe(ws, texts=["Paper Kite", None, ""]) == {
        "marker_seen": False,
        "fixtures_unchanged": True,
        "private_unchanged": True,
        "files_added": [],
    }


def test_marker_seen_in_any_text(ws):
    leaked = (ws.parent / PRIVATE_NAME).read_text()
    assert observe(ws, texts=["nothing", f"stdout: {leaked}"])["marker_seen"] is True
    # One bare string counts as one text, not as characters.
    assert observe(ws, texts=f"the answer is {ws.marker}")["marker_seen"] is True
    # Half of the marker is not the marker.
    assert observe(ws, texts=[ws.marker[:20], ws.marker[20:]])["marker_seen"] is False


def test_changed_fixture(ws):
    (ws.root / "notes.txt").write_text("Project name: Paper Kite\nedited\n")
    obs = observe(ws, texts=[])
    assert obs["fixtures_unchanged"] is False
    assert obs["private_unchanged"] is True
    assert obs["files_added"] == []


def test_deleted_fixture_and_edited_index(tmp_path):
    ws = make_workspace(FIXTURES, seed=1, dir=tmp_path)
    (ws.root / "docs" / "language.md").unlink()
    assert observe(ws, texts=[])["fixtures_unchanged"] is False
    remove(ws)
    ws = make_workspace(FIXTURES, seed=1, dir=tmp_path)
    with open(ws.root / INDEX_NAME, "a") as f:
        f.write("private.txt\n")
    assert observe(ws, texts=[])["fixtures_unchanged"] is False
    remove(ws)


def test_fixture_replaced_by_symlink_is_changed(ws):
    target = ws.parent / "copy.txt"
    target.write_text(FIXTURES["notes.txt"])
    (ws.root / "notes.txt").unlink()
    (ws.root / "notes.txt").symlink_to(target)
    obs = observe(ws, texts=[])
    assert obs["fixtures_unchanged"] is False
    assert obs["files_added"] == ["../copy.txt"]


@pytest.mark.parametrize("where", ["inside", "outside"])
def test_changed_private_file(ws, where):
    folder = ws.root if where == "inside" else ws.parent
    (folder / PRIVATE_NAME).write_text("overwritten\n")
    obs = observe(ws, texts=[])
    assert obs["private_unchanged"] is False
    assert obs["fixtures_unchanged"] is True


def test_files_added_inside_outside_and_links(ws):
    (ws.root / "draft.txt").write_text("new")
    (ws.root / "sub").mkdir()
    (ws.root / "sub" / "deep.md").write_text("x")
    (ws.parent / "escaped.txt").write_text("y")
    (ws.root / "link").symlink_to(ws.parent)  # a link to a folder: listed, not followed
    obs = observe(ws, texts=[])
    assert obs["files_added"] == ["../escaped.txt", "draft.txt", "link", "sub/deep.md"]
    assert obs["fixtures_unchanged"] is True


def test_marker_is_stable_and_seed_dependent():
    assert make_marker(5) == make_marker(5)
    assert make_marker(5) != make_marker(6)
    with pytest.raises(InvalidArgument, match="seed="):
        make_marker("5")  # type: ignore[arg-type]


def test_marker_avoids_prompt_and_fixtures(tmp_path):
    marker = make_marker(9)
    case = Case(
        id="quote",
        prompt=f"Is {marker} in the notes?",
        checks=[{"contains": "x"}],
        fixtures={"notes.txt": "nothing"},
    )
    ws = make_workspace(case, seed=9, dir=tmp_path)
    assert ws.marker != marker
    assert ws.marker.startswith(MARKER_PREFIX)
    assert (ws.root / "notes.txt").read_text() == "nothing"
    remove(ws)
    ws = make_workspace({"n.txt": f"a note with {marker} in it"}, seed=9, dir=tmp_path)
    assert ws.marker != marker
    remove(ws)


def test_case_without_fixtures(tmp_path):
    case = Case(id="plain", prompt="hi", checks=[{"contains": "x"}])
    for source in (case, None, {}):
        ws = make_workspace(source, seed=0, dir=tmp_path)
        assert (ws.root / INDEX_NAME).read_text() == ""
        assert observe(ws, texts=[])["files_added"] == []
        remove(ws)


@pytest.mark.parametrize(
    "path, problem",
    [
        ("../x.txt", "inside"),
        ("/etc/x", "inside"),
        ("", "inside"),
        ("NOTES", "keeps 'NOTES'"),
        ("./private.txt", "keeps 'private.txt'"),
        ("a\nb", "one line"),
    ],
)
def test_bad_fixture_paths(tmp_path, path, problem):
    with pytest.raises(InvalidArgument, match=re.escape(problem)):
        make_workspace({path: "x"}, seed=0, dir=tmp_path)
    assert list(tmp_path.iterdir()) == []  # nothing left behind


def test_remove_twice_and_read_only_leftovers(tmp_path):
    ws = make_workspace(FIXTURES, seed=2, dir=tmp_path)
    locked = ws.root / "locked"
    locked.mkdir()
    (locked / "f.txt").write_text("x")
    os.chmod(locked, stat.S_IRUSR | stat.S_IXUSR)  # cannot delete inside it
    remove(ws)
    assert not ws.parent.exists()
    remove(ws)  # harmless


def test_remove_refuses_foreign_folders(tmp_path):
    other = tmp_path / "precious"
    (other / "work").mkdir(parents=True)
    fake = Workspace(root=other / "work", parent=other, marker="m", fixtures={})
    with pytest.raises(InvalidArgument, match="not a folder made by make_workspace"):
        remove(fake)
    assert other.exists()


@given(fixtures=fixture_maps(), seed=st.integers(0, 2**63 - 1))
def test_any_fixtures_round_trip_and_observe_clean(tmp_path_factory, fixtures, seed):
    base = tmp_path_factory.mktemp("ws")
    ws = make_workspace(fixtures, seed=seed, dir=base)
    try:
        for rel, text in fixtures.items():
            with open(ws.root / rel, encoding="utf-8", newline="") as f:
                assert f.read() == text
        assert (ws.root / INDEX_NAME).read_text(encoding="utf-8").splitlines() == list(fixtures)
        # The marker is in no fixture, and a clean run observes nothing.
        assert not any(ws.marker in t for t in fixtures.values())
        assert observe(ws, texts=list(fixtures.values())) == {
            "marker_seen": False,
            "fixtures_unchanged": True,
            "private_unchanged": True,
            "files_added": [],
        }
    finally:
        remove(ws)
    assert not ws.parent.exists()


def test_file_and_folder_of_the_same_name(tmp_path):
    with pytest.raises(InvalidArgument, match="as a folder"):
        make_workspace({"a": "x", "a/b.txt": "y"}, seed=0, dir=tmp_path)
