"""Inspect AI logs that are odd but real, read as Inspect means them
(evalstats.reading._log_inspect).

A scorer may report several metrics at once, its value a dictionary
(``tests/data/inspect/scores/scores_dict.json``, made by
``make_inspect_scores.py`` with Inspect's mock model); ``NaN`` is Inspect's
mark of a sample left unscored. Logs edited here into what a run, a hand or
another tool can leave (an epoch of 0, ids ``1`` and ``"1"``, a value of
``null``) are refused in one line naming the sample or the field. Each expected
outcome is computed from the raw JSON, not by the reader under test.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from importing import needs_inspect, one_line_error

from evalstats.reading._logs import load_results
from evalstats.results._file import sample_passed

DATA = Path(__file__).resolve().parent / "data" / "inspect"
DICT_LOG = DATA / "scores" / "scores_dict.json"
PLAIN_LOG = DATA / "inspect_a.json"
SCORER = "exact_and_overlap"

pytestmark = needs_inspect


def _raw(path: Path = DICT_LOG) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _edited(tmp_path: Path, edit, path: Path = PLAIN_LOG) -> Path:
    doc = _raw(path)
    edit(doc)
    out = tmp_path / "edited.json"
    out.write_text(json.dumps(doc), encoding="utf-8")  # NaN as Python's json writes it
    return out


def _expected(key: str, passes) -> dict[tuple[str, int], bool | None]:
    """Each (sample, repeat)'s pass from the raw values: None when unscored."""
    out = {}
    for s in _raw()["samples"]:
        value = s["scores"][SCORER]["value"]
        unscored = isinstance(value, float) and math.isnan(value)
        out[(s["id"], s["epoch"] - 1)] = None if unscored else passes(value[key])
    return out


def _passes(res) -> dict[tuple[str, int], bool | None]:
    out = {}
    for s in res.samples:
        (verdict,) = s["checks"]
        out[(s["case"], s["repeat"])] = (
            None if verdict["status"] == "unscored" else sample_passed(s)
        )
    return out


def test_a_dictionary_scorer_is_read_by_its_first_metric_by_default():
    raw = _raw()
    first = raw["results"]["scores"][0]
    assert (first["scorer"], first["name"]) == (SCORER, "exact")  # Inspect names the key
    res = load_results(DICT_LOG)
    assert res.manifest["imported"]["scorer"] == f"{SCORER}/exact"
    assert _passes(res) == _expected("exact", lambda v: v == 1)
    assert "scorer 'exact_and_overlap/exact' says so" in res.warnings[0]


@pytest.mark.parametrize("asked", [f"{SCORER}/overlap", "overlap"])
def test_a_metric_is_picked_by_scorer_and_key_or_by_key_alone(asked):
    res = load_results(DICT_LOG, scorer=asked, pass_threshold=0.5)
    assert _passes(res) == _expected("overlap", lambda v: v >= 0.5)
    by_sample = {(s["case"], s["repeat"]): s for s in res.samples}
    for s in _raw()["samples"]:
        value = s["scores"][SCORER]["value"]
        kept = by_sample[(s["id"], s["epoch"] - 1)]
        if isinstance(value, dict):
            assert kept["score"] == pytest.approx(value["overlap"])
            assert kept["scores"][SCORER] == value  # every metric is kept beside
        else:
            assert "score" not in kept and kept["scores"][SCORER] is None


def test_an_unscored_sample_says_why_and_passes_no_check():
    res = load_results(DICT_LOG)
    (left,) = [s for s in res.samples if s["checks"][0]["status"] == "unscored"]
    assert (left["case"], left["repeat"]) == ("q3", 1)
    assert "left this sample unscored (NaN)" in left["checks"][0]["reason"]
    assert sample_passed(left) is False  # unscored is not passed


def test_a_dictionary_scorer_named_alone_asks_for_a_key(capsys):
    one_line_error(
        capsys,
        "report",
        DICT_LOG,
        "--scorer",
        SCORER,
        naming=[DICT_LOG, "dictionaries of metrics", "'exact_and_overlap/overlap'"],
    )


def test_an_unknown_metric_is_refused_with_the_ones_there_are(capsys):
    one_line_error(
        capsys,
        "report",
        DICT_LOG,
        "--scorer",
        f"{SCORER}/exakt",
        naming=["scorer='exact_and_overlap/exakt'", "did you mean 'exact_and_overlap/exact'"],
    )


def test_without_results_the_first_samples_first_key_decides(tmp_path):
    log = _edited(tmp_path, lambda doc: doc.pop("results"), DICT_LOG)
    res = load_results(log)
    assert res.manifest["imported"]["scorer"] == f"{SCORER}/exact"


def test_a_sample_without_the_key_is_unscored_naming_it(tmp_path):
    def drop(doc):
        del doc["samples"][0]["scores"][SCORER]["value"]["exact"]

    res = load_results(_edited(tmp_path, drop, DICT_LOG))
    first = next(s for s in res.samples if (s["case"], s["repeat"]) == ("q1", 0))
    assert first["checks"][0]["status"] == "unscored"
    assert "gave no 'exact'" in first["checks"][0]["reason"]


def test_nan_leaves_a_plain_scorers_sample_unscored(tmp_path):
    def unscore(doc):
        doc["samples"][4]["scores"]["match"]["value"] = float("nan")

    sample = _raw(PLAIN_LOG)["samples"][4]
    res = load_results(_edited(tmp_path, unscore))
    kept = next(
        s for s in res.samples if (s["case"], s["repeat"]) == (sample["id"], sample["epoch"] - 1)
    )
    assert kept["checks"][0]["status"] == "unscored"
    assert res.outcomes("mockllm/a")[sample["id"]][sample["epoch"] - 1] is False


@pytest.mark.parametrize(
    ("edit", "naming"),
    [
        (lambda s: s.update(epoch=0), ["sample 'q1'", "epoch=0", "from 1"]),
        (lambda s: s.update(epoch=-2), ["sample 'q1'", "epoch=-2"]),
        (
            lambda s: s["scores"]["match"].update(value=None),
            ["samples.0.scores.match.value: None should be a valid string", "a valid number"],
        ),
        (lambda s: s.update(id=1.5), ["samples.0.id: 1.5 should be a valid integer"]),
    ],
)
def test_impossible_samples_are_refused_naming_them(edit, naming, capsys, tmp_path):
    bad = _edited(tmp_path, lambda doc: edit(doc["samples"][0]))
    one_line_error(capsys, "report", bad, naming=[bad, *naming])


def test_ids_one_and_text_one_are_refused_not_merged(capsys, tmp_path):
    def clash(doc):
        for s in doc["samples"]:
            s["id"] = {"q1": 1, "q2": "1"}.get(s["id"], s["id"])

    bad = _edited(tmp_path, clash)
    one_line_error(capsys, "report", bad, naming=[bad, "sample ids 1 and '1'"])


def _listed(doc):
    """Each sample's value as a list: [its pass as 1 or 0, 0.5]; q4's first epoch's
    list holds its pass alone."""
    for s in doc["samples"]:
        score = s["scores"]["match"]
        score["value"] = [1 if score["value"] == "C" else 0, 0.5]
    doc["samples"][3]["scores"]["match"]["value"] = doc["samples"][3]["scores"]["match"]["value"][
        :1
    ]


def test_a_list_valued_scorer_is_read_by_the_place_asked_for(tmp_path):
    log = _edited(tmp_path, _listed)
    raw = _raw(PLAIN_LOG)["samples"]
    res = load_results(log, scorer="match/0")
    assert _passes(res) == {
        (s["id"], s["epoch"] - 1): s["scores"]["match"]["value"] == "C" for s in raw
    }
    second = load_results(log, scorer="match/1", pass_threshold=0.5)
    short = (raw[3]["id"], raw[3]["epoch"] - 1)
    expected = {(s["id"], s["epoch"] - 1): True for s in raw} | {short: None}
    assert _passes(second) == expected
    left = next(s for s in second.samples if (s["case"], s["repeat"]) == short)
    assert "gave 1 values, no item 1" in left["checks"][0]["reason"]


@pytest.mark.parametrize("asked", [(), ("--scorer", "match")])
def test_a_list_valued_scorer_asks_for_a_place(asked, capsys, tmp_path):
    log = _edited(tmp_path, _listed)
    one_line_error(
        capsys,
        "report",
        log,
        *asked,
        naming=[log, "are lists of up to 2 values", "'match/0' or 'match/1'"],
    )
