"""Results files that break the format: every reading verb says so in one line, exit 2.

Each bad file below is a valid run with one thing wrong (in the manifest, the
schedule or a sample). ``report``, ``compare``, ``gate``, ``compare-runs`` and
``plan --from`` must each print one line on stderr naming the file and the
line, exit with 2 (``gate`` too: a bad file is not a failed gate), print no
traceback and leave the file as it was.
"""

from __future__ import annotations

import copy
import json

import pytest
from records import sample
from strategies import results_manifest

from evalstats.cli import main
from evalstats.errors import InvalidArgument
from evalstats.presenting._report import report
from evalstats.results._file import Results, ResultsWriter, read_results

#: How the good file's samples were recorded.
AS_RUN = {"name": "c", "axis": "content", "latency_s": 0.25, "tokens": {"input": 3, "output": 4}}


def _good() -> tuple[dict, list[dict]]:
    manifest = results_manifest(["x", "y"], ["A", "B"], 2)
    samples = [
        sample(c, v, r, v == "B" or r == 0, **AS_RUN) for r in range(2) for c in "xy" for v in "AB"
    ]
    return manifest, samples


def _manifest(**change):
    def edit(m, s):
        m.update(change)

    return edit


def _slot(i, value):
    def edit(m, s):
        m["schedule"][0][i] = value

    return edit


def _field(key, value, *, check=False):
    def edit(m, s):
        target = s[1]["checks"][0] if check else s[1]
        target[key] = value

    return edit


# (what is wrong, how to make it wrong, a word the error must contain)
BAD = [
    ("suite is a string", _manifest(suite="shop"), '"suite"'),
    ("suite is a list", _manifest(suite=["shop"]), '"suite"'),
    ("cases is not a list", _manifest(cases="notalist"), '"cases"'),
    ("a case is a list", _manifest(cases=[["x"], {"id": "y"}]), '"cases"[0]'),
    ("a case has no id", _manifest(cases=[{"prompt": "p"}]), '"cases"[0]'),
    ("a case id is a number", _manifest(cases=[{"id": 7}]), '"cases"[0]'),
    ("variants hold numbers and null", _manifest(variants=[1, 2, None]), '"variants"[0]'),
    ("variants is a string", _manifest(variants="A"), '"variants"'),
    ("a variant name is a list", _manifest(variants=[{"name": ["A"]}]), '"variants"[0]'),
    ("runs is a word", _manifest(runs="many"), '"runs"'),
    ("runs is 10**12", _manifest(runs=10**12), '"runs"'),
    ("runs is negative", _manifest(runs=-1), '"runs"'),
    ("runs is a bool", _manifest(runs=True), '"runs"'),
    ("runs is a fraction", _manifest(runs=2.5), '"runs"'),
    ("schedule is a string", _manifest(schedule="notalist"), '"schedule"'),
    ("schedule is an object", _manifest(schedule={"x": 1}), '"schedule"'),
    ("a schedule repeat is a word", _slot(1, "x"), "repeat"),
    ("a schedule repeat is 10**9", _slot(1, 10**9), "repeat"),
    ("a schedule repeat is negative", _slot(1, -1), "repeat"),
    ("a schedule case is a list", _slot(0, ["x"]), "case"),
    ("a schedule variant is null", _slot(4, None), "variant"),
    ("a schedule pair is a word", _slot(2, "p"), "pair"),
    (
        "a schedule slot is short",
        lambda m, s: m["schedule"].__setitem__(0, ["x", 0]),
        '"schedule"[0]',
    ),
    (
        "a schedule slot is a string",
        lambda m, s: m["schedule"].__setitem__(0, "x"),
        '"schedule"[0]',
    ),
    ("a check name is a list", _field("check", ["c"], check=True), '"check"'),
    ("a check axis is a number", _field("axis", 3, check=True), '"axis"'),
    ("a check reason is an object", _field("reason", {"r": 1}, check=True), '"reason"'),
    ("a check status is unknown", _field("status", "pass", check=True), '"status"'),
    ("latency is a word", _field("latency_s", "slow"), '"latency_s"'),
    ("latency is a bool", _field("latency_s", True), '"latency_s"'),
    ("latency is a list", _field("latency_s", [1]), '"latency_s"'),
    ("tokens is a number", _field("tokens", 12), '"tokens"'),
    ("a token count is a word", _field("tokens", {"input": "many"}), '"input"'),
    ("a token count is negative", _field("tokens", {"output": -3}), '"output"'),
    ("a sample repeat is a word", _field("repeat", "x"), '"repeat"'),
    ("a sample repeat is 10**9", _field("repeat", 10**9), '"repeat"'),
    ("a sample repeat is a bool", _field("repeat", False), '"repeat"'),
    ("a sample case is a list", _field("case", ["x"]), '"case"'),
    ("a sample variant is null", _field("variant", None), '"variant"'),
    ("a sample status is unknown", _field("status", "done"), '"status"'),
    ("checks is an object", _field("checks", {"c": "passed"}), '"checks"'),
    ("a check is a string", _field("checks", ["passed"]), "checks[0]"),
    ("not_inspected is a word", _field("not_inspected", "yes", check=True), '"not_inspected"'),
    ("judge_unmeasured is null", _field("judge_unmeasured", None, check=True), "judge_unmeasured"),
]

VERBS = [
    ("report", lambda f: ["report", f]),
    ("report --json", lambda f: ["report", f, "--json"]),
    ("compare", lambda f: ["compare", f, "--a", "A", "--b", "B"]),
    ("gate", lambda f: ["gate", f, "--variant", "B", "--min-pass", "0.5"]),
    ("compare-runs", lambda f: ["compare-runs", f, f]),
    ("plan --from", lambda f: ["plan", "--from", f, "--pb", "+0.1", "--approximate"]),
]


def _write(path, manifest, samples):
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({**manifest, "type": "manifest", "format": 1}) + "\n")
        for s in samples:
            f.write(json.dumps(s) + "\n")
        f.write(json.dumps({"type": "summary", "status": "finished"}) + "\n")
    return path


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bad")
    files = {}
    for i, (what, edit, _) in enumerate(BAD):
        manifest, samples = _good()
        edit(manifest, samples)
        files[what] = _write(folder / f"bad{i}.jsonl", manifest, samples)
    return files


def test_the_good_file_reads(tmp_path, capsys):
    path = str(_write(tmp_path / "good.jsonl", *_good()))
    for _, argv in VERBS:
        assert main(argv(path)) == 0, argv(path)
    capsys.readouterr()


@pytest.mark.parametrize("verb,argv", VERBS, ids=[v for v, _ in VERBS])
@pytest.mark.parametrize("what,edit,word", BAD, ids=[b[0] for b in BAD])
def test_bad_file_gives_one_line_and_exit_2(bad_files, capsys, verb, argv, what, edit, word):
    path = bad_files[what]
    before = path.read_bytes()
    code = main(argv(str(path)))
    out, err = capsys.readouterr()
    assert code == 2, (what, verb, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err and "gate failed" not in out + err
    assert lines[0].startswith("evalstats: error: ") and str(path) in lines[0]
    assert "line " in lines[0] and word in lines[0], lines[0]
    assert len(lines[0]) < 400  # quotes at most a short prefix of what is wrong
    assert path.read_bytes() == before


@pytest.mark.parametrize("what,edit,word", BAD, ids=[b[0] for b in BAD])
def test_bad_records_in_memory_are_refused_by_name(what, edit, word):
    manifest, samples = _good()
    edit(manifest, samples)
    with pytest.raises(InvalidArgument, match=None) as info:
        report(Results(None, manifest, tuple(samples), None, ()))
    assert word in str(info.value)


def test_read_results_refuses_them_too(bad_files):
    from evalstats.errors import ResultsFileError

    for _what, path in bad_files.items():
        with pytest.raises(ResultsFileError, match=r"line \d+"):
            read_results(path)


def test_the_writer_never_begins_a_file_its_reader_refuses(tmp_path):
    manifest, _ = _good()
    bad = copy.deepcopy(manifest)
    bad["runs"] = "many"
    with pytest.raises(InvalidArgument, match='"runs"'):
        ResultsWriter.create(tmp_path / "r.jsonl", bad)
    assert not (tmp_path / "r.jsonl").exists()


def test_recorded_non_finite_latency_and_tokens_are_read_as_unmeasured(tmp_path):
    # The writer records NaN and Infinity as strings; readers count no latency for them.
    manifest, samples = _good()
    samples[0]["latency_s"] = "NaN"
    samples[1]["latency_s"] = "Infinity"
    samples[2]["tokens"] = {"input": "NaN", "output": 2}
    path = _write(tmp_path / "r.jsonl", manifest, samples)
    r = report(path)
    a, b = r.variant("A"), r.variant("B")
    assert a.latency_samples + b.latency_samples == len(samples) - 2
    assert a.tokens_samples + b.tokens_samples == len(samples)
    assert r.to_dict() == report(read_results(path)).to_dict() | {"path": str(path)}
