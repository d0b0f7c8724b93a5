"""Calibration files and the ``evalstats calibrate`` command."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalstats.cli import main
from evalstats.errors import EvalStatsError, InvalidArgument
from evalstats.running._judge import (
    Calibration,
    CalibrationFileError,
    VerdictPair,
    calibrate_file,
    corrected_pass_rate,
    read_calibration_file,
)
from evalstats.stats._intervals import proportion_ci


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# person-by-check table: 18 true passes, 2 false fails, 16 true fails, 4 false passes
ROWS = (
    [("pass", "pass")] * 18
    + [("pass", "fail")] * 2
    + [("fail", "fail")] * 16
    + [("fail", "pass")] * 4
)


def _csv(rows=ROWS, header="human,check") -> str:
    return header + "\n" + "".join(f"{h},{c}\n" for h, c in rows)


# --- reading files ---------------------------------------------------------------------


def test_read_a_csv_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "v.csv", 'answer,person,judge\n"Order A-1042, shipped",pass,FAIL\n')
    (pair,) = read_calibration_file(path)
    assert pair == VerdictPair(True, False, "Order A-1042, shipped", f"{path}:2")


def test_read_a_jsonl_file(tmp_path: Path) -> None:
    text = (
        '{"human": true, "check": "fail", "answer": "It shipped."}\n'
        "\n"
        '{"person": "no", "judge": 0}\n'
        '{"human": "Passed", "check": "unscored"}\n'
    )
    pairs = read_calibration_file(_write(tmp_path, "v.jsonl", text))
    assert [(p.human, p.check, p.answer) for p in pairs] == [
        (True, False, "It shipped."),
        (False, False, ""),
        (True, None, ""),
    ]
    assert [p.source.rsplit(":", 1)[1] for p in pairs] == ["1", "3", "4"]


@pytest.mark.parametrize(
    ("word", "value"),
    [
        ("pass", True),
        ("PASS", True),
        ("passed", True),
        ("True", True),
        ("1", True),
        ("yes", True),
        (" Yes ", True),
        ("fail", False),
        ("Failed", False),
        ("false", False),
        ("0", False),
        ("NO", False),
    ],
)
def test_verdict_words(tmp_path: Path, word: str, value: bool) -> None:
    (pair,) = read_calibration_file(_write(tmp_path, "v.csv", f"human,check\n{word},{word}\n"))
    assert pair.human is value and pair.check is value


def test_a_csv_from_a_spreadsheet_with_a_byte_order_mark_and_capitals(tmp_path: Path) -> None:
    path = tmp_path / "v.csv"
    path.write_bytes("\ufeffHuman , Check\r\npass,pass\r\n".encode())
    assert read_calibration_file(path)[0].human is True


@pytest.mark.parametrize("sep", [";", "\t"])
def test_a_spreadsheet_export_separated_by_semicolons_or_tabs(tmp_path: Path, sep: str) -> None:
    # Excel in many languages saves "CSV" with semicolons; the answer keeps its comma
    text = sep.join(["Human", "Check", "answer"]) + "\r\n"
    text += sep.join(["pass", "fail", "Order A-1042, shipped"]) + "\r\n"
    text += sep.join(["fail", "fail", "no"]) + "\r\n"
    pairs = read_calibration_file(_write(tmp_path, "v.csv", text))
    assert [(p.human, p.check, p.answer) for p in pairs] == [
        (True, False, "Order A-1042, shipped"),
        (False, False, "no"),
    ]


#: An answer as a person or a model writes it: any text but the NUL the csv module
#: refuses and a lone CR, which it writes unquoted when lines end in LF alone (and
#: which then ends the line for every reader).
_ANSWERS = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\r"), max_size=30
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.tuples(st.booleans(), st.booleans(), _ANSWERS), min_size=1, max_size=8),
    st.sampled_from([",", ";", "\t"]),
    st.sampled_from(["\n", "\r\n"]),
)
def test_any_answers_written_by_the_csv_module_read_back(tmp_path, rows, sep, end) -> None:
    out = io.StringIO(newline="")
    writer = csv.writer(out, delimiter=sep, lineterminator=end)
    writer.writerow(["human", "check", "answer"])
    for human, check, answer in rows:
        writer.writerow(["pass" if human else "fail", "pass" if check else "fail", answer])
    path = tmp_path / "v.csv"
    path.write_bytes(out.getvalue().encode("utf-8"))
    pairs = read_calibration_file(path)
    assert [(p.human, p.check, p.answer) for p in pairs] == rows


def test_a_file_without_a_known_suffix_is_sniffed(tmp_path: Path) -> None:
    assert read_calibration_file(_write(tmp_path, "v.txt", _csv()))[0].human is True
    assert read_calibration_file(_write(tmp_path, "v", '{"human": 1, "check": 1}\n'))[0].check


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("v.csv", "", "v.csv: the file is empty"),
        ("v.csv", "human,check\n", "v.csv: no rows"),
        ("v.jsonl", "\n\n", "v.jsonl: no rows"),
        ("v.csv", "person,verdict\npass,pass\n", "v.csv, line 1: no column for the check's"),
        ("v.csv", "answer,check\nx,pass\n", "v.csv, line 1: no column for the person's"),
        ("v.csv", "human,person,check\npass,pass,pass\n", "v.csv, line 1: both 'human' and"),
        (
            "v.csv",
            "human,check\npass,pass\npass,maybe\n",
            "v.csv, line 3: check='maybe' is not a verdict; use pass/fail",
        ),
        ("v.csv", "human,check\nunscored,pass\n", "v.csv, line 2: human='unscored' is not"),
        ("v.csv", "human,check\npass\n", "v.csv, line 2: no check verdict"),
        ("v.csv", "human,check\npass,,\n", "v.csv, line 2: more cells than the header"),
        (
            "v.jsonl",
            '{"human": true, "check": true}\n{"human": tru\n',
            "v.jsonl, line 2: not valid JSON",
        ),
        ("v.jsonl", "[true, true]\n", "v.jsonl, line 1: expected a JSON object"),
        ("v.jsonl", '{"human": true}\n', "v.jsonl, line 1: no check verdict"),
        ("v.jsonl", '{"human": 2, "check": true}\n', "v.jsonl, line 1: human=2 is not a verdict"),
        ("v.jsonl", '{"human": true, "check": null}\n', "v.jsonl, line 1: no check verdict"),
    ],
)
def test_bad_files_say_which_file_line_and_problem(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = _write(tmp_path, name, text)
    with pytest.raises(CalibrationFileError) as info:
        read_calibration_file(path)
    assert str(info.value).startswith(str(tmp_path))
    assert message in str(info.value)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, EvalStatsError)


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CalibrationFileError, match="cannot read the file"):
        read_calibration_file(tmp_path / "nope.csv")


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=40))
def test_csv_and_jsonl_round_trip_any_pairs(tmp_path_factory, pairs) -> None:
    folder = tmp_path_factory.mktemp("pairs")
    csv_text = "human,check\n" + "".join(f"{h},{'pass' if c else 'fail'}\n" for h, c in pairs)
    jsonl_text = "".join(json.dumps({"person": h, "judge": c}) + "\n" for h, c in pairs)
    for name, text in (("p.csv", csv_text), ("p.jsonl", jsonl_text)):
        read = read_calibration_file(_write(folder, name, text))
        assert [(p.human, p.check) for p in read] == pairs


def test_calibrate_file_counts_and_corrects(tmp_path: Path) -> None:
    report = calibrate_file(_write(tmp_path, "v.csv", _csv()), observed="42/60")
    cal = report.calibration
    assert (cal.true_pass, cal.false_fail, cal.true_fail, cal.false_pass) == (18, 2, 16, 4)
    assert report.corrected == corrected_pass_rate(42, 60, Calibration.from_counts(18, 2, 16, 4))
    assert report.naive == proportion_ci(42, 60)
    assert cal.disagreements[0].source.endswith("v.csv:20")


@pytest.mark.parametrize("observed", ["42", "42/", "a/b", "61/60", "3/0", "-1/5"])
def test_a_bad_observed_rate_is_rejected(tmp_path: Path, observed: str) -> None:
    with pytest.raises(InvalidArgument):
        calibrate_file(_write(tmp_path, "v.csv", _csv()), observed=observed)


# --- the command ------------------------------------------------------------------------


def test_command_prints_the_calibration(tmp_path: Path, capsys) -> None:
    path = _write(tmp_path, "verdicts.csv", _csv())
    assert main(["calibrate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "40 scored answers (20 good, 20 bad)" in out
    assert "sensitivity    90%" in out and "passed 18 of 20 good answers" in out
    assert "specificity    80%" in out and "failed 16 of 20 bad answers" in out
    assert "Cohen's kappa" in out
    # Wilson 95% lower ends: 18 of 20 -> 69.9%, 16 of 20 -> 58.4%
    # (statsmodels proportion_confint(18, 20, method="wilson") gives 0.6990).
    assert (
        "rule           the lower ends of the 95% intervals must reach 80% for sensitivity" in out
    )
    assert (
        "passed calibration: no: sensitivity could be as low as 70% (needs 80%); "
        "specificity could be as low as 58% (needs 80%)"
    ) in out
    assert "corrected" not in out


def test_command_takes_the_rule_s_limits(tmp_path: Path, capsys) -> None:
    path = _write(tmp_path, "verdicts.csv", _csv())
    args = ["calibrate", str(path), "--min-sensitivity", "0.65", "--min-specificity", "0.55"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "must reach 65% for sensitivity and 55% for specificity" in out
    assert "passed calibration: yes: sensitivity at least 70%, specificity at least 58%" in out
    assert main([*args, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["calibration"]["passed_calibration"] is True
    assert doc["calibration"]["rule"]["min_sensitivity"] == 0.65


def test_the_readme_s_calibrate_example_is_true(capsys) -> None:
    # The README shows the output of `evalstats calibrate examples/verdicts.csv
    # --observed 130/200` on the file shipped in examples/; every line it shows
    # is printed.
    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text(encoding="utf-8")
    command = "evalstats calibrate examples/verdicts.csv --observed 130/200"
    assert command in readme
    shown = readme.split(f"$ {command}\n", 1)[1].split("```", 1)[0].splitlines()
    shown = [
        line.replace("examples/verdicts.csv", str(root / "examples" / "verdicts.csv"))
        for line in shown
        if line.strip()
    ]
    assert len(shown) >= 8
    assert (
        main(["calibrate", str(root / "examples" / "verdicts.csv"), "--observed", "130/200"]) == 0
    )
    printed = capsys.readouterr().out.splitlines()
    for line in shown:
        assert line in printed, line


def test_command_with_observed_prints_the_corrected_and_naive_rates(tmp_path: Path, capsys):
    path = _write(tmp_path, "verdicts.csv", _csv())
    assert main(["calibrate", str(path), "--observed", "42/60", "--level", "0.9"]) == 0
    out = capsys.readouterr().out
    cal = Calibration.from_counts(18, 2, 16, 4, level=0.9)
    assert f"as reported (Wilson)             {proportion_ci(42, 60, level=0.9)}" in out
    assert f"corrected for the check's errors {corrected_pass_rate(42, 60, cal, level=0.9)}" in out
    assert "90% intervals" in out


def test_command_json_is_one_document(tmp_path: Path, capsys) -> None:
    path = _write(
        tmp_path,
        "verdicts.jsonl",
        "".join(json.dumps({"human": h, "check": c}) + "\n" for h, c in ROWS),
    )
    assert main(["calibrate", str(path), "--observed", "42/60", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["calibration"]["true_pass"] == 18
    assert doc["calibration"]["false_pass"] == 4
    assert doc["observed"] == {"passes": 42, "trials": 60}
    expected = corrected_pass_rate(42, 60, Calibration.from_counts(18, 2, 16, 4))
    assert doc["corrected"]["estimate"] == pytest.approx(expected.estimate)
    assert doc["corrected"]["method"] == "lang_reiczigel"
    assert doc["naive"]["method"] == "wilson"


@pytest.mark.parametrize(
    ("text", "extra", "message"),
    [
        ("human,check\npass,maybe\n", [], "line 2: check='maybe' is not a verdict"),
        ("human,verdict\npass,pass\n", [], "line 1: no column for the check's verdict"),
        ("human,check\n", [], "no rows"),
        (
            _csv(),
            ["--observed", "70/60"],
            "observed='70/60' (K/N): passes=70 is larger than trials=60",
        ),
        (
            _csv([("pass", "pass"), ("pass", "fail"), ("fail", "pass")]),
            ["--observed", "1/2"],
            "no better than chance",
        ),
        (_csv(), ["--level", "95"], "did you mean 0.95"),
        (
            _csv(),
            ["--min-sensitivity", "80"],
            "min_sensitivity=80.0 must be a share between 0 and 1",
        ),
        (_csv(), ["--min-specificity", "-0.1"], "min_specificity=-0.1 must be a share"),
    ],
)
def test_command_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys, text: str, extra: list[str], message: str
) -> None:
    path = _write(tmp_path, "verdicts.csv", text)
    assert main(["calibrate", str(path), *extra]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip()
    assert "\n" not in err and err.startswith("evalstats: error: ")
    assert message in err


def test_command_without_a_file_is_a_usage_error(capsys) -> None:
    assert main(["calibrate"]) == 2
    assert "FILE" in capsys.readouterr().err
