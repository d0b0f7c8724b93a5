"""The bad-input table: every bad input to the command line gets one line and exit 2.

Each row is a command line (``{d}`` is a folder holding the files the row
plants) and the files it plants. The command must exit with status 2, print
exactly one line on stderr, print no traceback, and leave every file of the
folder as it was (nothing written, nothing removed). The command runs in
process through :func:`evalstats.cli._main.main`, so the table stays fast.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from records import sample

from evalstats.cli import main
from evalstats.results._file import ResultsWriter

SUITE = {
    "name": "mini",
    "cases": [{"id": "a", "prompt": "Where is A-1042?", "checks": [{"contains": "A-1042"}]}],
}


def suite_with(**case: object) -> str:
    return json.dumps({"name": "mini", "cases": [{**SUITE["cases"][0], **case}]})


BOMB = "\n".join(
    [
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
        *(
            f"{n}: &{n} [{','.join(['*' + p] * 9)}]"
            for p, n in zip("abcdefgh", "bcdefghi", strict=True)
        ),
        "cases:",
        "  - id: x",
        "    prompt: hi",
        "    checks: [{contains: *i}]",
    ]
)

# Under the expansion limit (59,000 values), but far too long to quote whole.
SMALL_BOMB = (
    "cases:\n  - id: x\n    prompt: hi\n    checks: [{contains: ["
    + ",".join(
        [
            "&a [" + ",".join(["lol"] * 9) + "]",
            *(f"&{n} [" + ",".join([f"*{p}"] * 9) + "]" for p, n in zip("abc", "bcd", strict=True)),
            "[" + ",".join(["*d"] * 9) + "]",
        ]
    )
    + "]}]\n"
)

GOOD_RUN = "good.jsonl"
V = "v=standin:shop-v1"
RUN = ["run", "{d}/suite.json", "--variant", V, "--out", "{d}/out.jsonl"]

# (id, argv, planted files: name -> text)
TABLE: list[tuple[str, list[str], dict[str, str]]] = [
    # -- usage
    ("unknown verb", ["frobnicate"], {}),
    ("unknown verb close to one", ["reprot", "x"], {}),
    ("unknown option", ["power", "--pa", "0.5", "--pb", "0.6", "--trials", "9", "--nope"], {}),
    ("missing required", ["power", "--pa", "0.5"], {}),
    ("not a number", ["power", "--pa", "half", "--pb", "0.6", "--trials", "9"], {}),
    # -- power
    ("rate above 1", ["power", "--pa", "1.5", "--pb", "0.6", "--trials", "9"], {}),
    ("rate nan", ["power", "--pa", "nan", "--pb", "0.6", "--trials", "9"], {}),
    ("zero trials", ["power", "--pa", "0.5", "--pb", "0.6", "--trials", "0"], {}),
    ("absurd trials", ["power", "--pa", "0.5", "--pb", "0.6", "--trials", "100000000"], {}),
    (
        "unknown method",
        ["power", "--pa", "0.5", "--pb", "0.6", "--trials", "9", "--method", "x"],
        {},
    ),
    ("level 95", ["power", "--pa", "0.5", "--pb", "0.6", "--trials", "9", "--level", "95"], {}),
    (
        "plot into a missing folder",
        ["power", "--pa", "0.5", "--pb", "0.6", "--trials", "5", "--plot", "{d}/no/p.png"],
        {},
    ),
    (
        "plot over an existing file",
        ["power", "--pa", "0.5", "--pb", "0.6", "--trials", "5", "--plot", "{d}/p.png"],
        {"p.png": "mine"},
    ),
    (
        "figure of too many trials",
        ["power", "--pa", "0.5", "--pb", "0.6", "--trials", "5000", "--plot", "{d}/q.png"],
        {},
    ),
    # -- plan
    ("plan without rates", ["plan", "--icc", "0.1"], {}),
    ("plan icc above 1", ["plan", "--pa", "0.5", "--pb", "0.6", "--icc", "2"], {}),
    ("plan power 1", ["plan", "--pa", "0.5", "--pb", "0.6", "--icc", "0.1", "--power", "1"], {}),
    ("plan from a missing file", ["plan", "--from", "{d}/none.jsonl"], {}),
    ("plan from an empty file", ["plan", "--from", "{d}/e.jsonl"], {"e.jsonl": ""}),
    # -- run: suites
    ("run a missing suite", [*RUN, "--runs", "1"], {}),
    (
        "run a suite of the wrong kind",
        ["run", "{d}/s.txt", "--variant", V, "--runs", "1", "--out", "{d}/o"],
        {"s.txt": "x"},
    ),
    ("run bad JSON", [*RUN, "--runs", "1"], {"suite.json": "{not json"}),
    (
        "run JSON nested 200,000 deep",
        [*RUN, "--runs", "1"],
        {"suite.json": "[" * 200_000 + "]" * 200_000},
    ),
    ("run JSON with NaN", [*RUN, "--runs", "1"], {"suite.json": '{"cases": NaN}'}),
    ("run JSON duplicate key", [*RUN, "--runs", "1"], {"suite.json": '{"name": "a", "name": "b"}'}),
    ("run suite not an object", [*RUN, "--runs", "1"], {"suite.json": "[1, 2]"}),
    ("run no cases", [*RUN, "--runs", "1"], {"suite.json": '{"name": "x", "cases": []}'}),
    ("run case without prompt", [*RUN, "--runs", "1"], {"suite.json": '{"cases": [{"id": "a"}]}'}),
    (
        "run unknown check",
        [*RUN, "--runs", "1"],
        {"suite.json": suite_with(checks=[{"contanis": "x"}])},
    ),
    (
        "run check args wrong",
        [*RUN, "--runs", "1"],
        {"suite.json": suite_with(checks=[{"word_count": "x"}])},
    ),
    (
        "run fixture NOTES",
        [*RUN, "--runs", "1"],
        {"suite.json": suite_with(fixtures={"NOTES": "x"})},
    ),
    (
        "run fixture private.txt",
        [*RUN, "--runs", "1"],
        {"suite.json": suite_with(fixtures={"./private.txt": "x"})},
    ),
    (
        "run fixture outside",
        [*RUN, "--runs", "1"],
        {"suite.json": suite_with(fixtures={"../x": "x"})},
    ),
    (
        "run fixture absolute",
        [*RUN, "--runs", "1"],
        {"suite.json": suite_with(fixtures={"/etc/x": "x"})},
    ),
    (
        "run YAML alias bomb",
        ["run", "{d}/s.yaml", "--variant", V, "--runs", "1", "--out", "{d}/o"],
        {"s.yaml": BOMB},
    ),
    (
        "run YAML alias bomb under the limit",
        ["run", "{d}/s.yaml", "--variant", V, "--runs", "1", "--out", "{d}/o"],
        {"s.yaml": SMALL_BOMB},
    ),
    (
        "run YAML date that is no date",
        ["run", "{d}/s.yaml", "--variant", V, "--runs", "1", "--out", "{d}/o"],
        {"s.yaml": "cases:\n  - id: 2001-02-30\n    prompt: hi\n    checks: [{contains: x}]\n"},
    ),
    (
        "run YAML 5,000-digit integer",
        ["run", "{d}/s.yaml", "--variant", V, "--runs", "1", "--out", "{d}/o"],
        {
            "s.yaml": "cases:\n  - id: a\n    prompt: hi\n    checks: [{word_count: ["
            + "9" * 5000
            + ", 3]}]\n"
        },
    ),
    (
        "run YAML nested deeply",
        ["run", "{d}/s.yaml", "--variant", V, "--runs", "1", "--out", "{d}/o"],
        {"s.yaml": "[" * 50_000 + "]" * 50_000},
    ),
    (
        "run YAML recursive alias",
        ["run", "{d}/s.yaml", "--variant", V, "--runs", "1", "--out", "{d}/o"],
        {"s.yaml": "cases: &c\n  - id: a\n    prompt: hi\n    checks: [{contains: x}]\n  - *c\n"},
    ),
    (
        "run YAML not UTF-8",
        ["run", "{d}/s.yaml", "--variant", V, "--runs", "1", "--out", "{d}/o"],
        {"s.yaml": "cases: caf\udce9\n"},
    ),
    # -- run: arguments
    ("run runs 0", [*RUN, "--runs", "0"], {"suite.json": json.dumps(SUITE)}),
    ("run runs 10^9", [*RUN, "--runs", "1000000000"], {"suite.json": json.dumps(SUITE)}),
    ("run runs text", [*RUN, "--runs", "many"], {"suite.json": json.dumps(SUITE)}),
    (
        "run negative timeout",
        [*RUN, "--runs", "1", "--timeout", "-1"],
        {"suite.json": json.dumps(SUITE)},
    ),
    (
        "run nan timeout",
        [*RUN, "--runs", "1", "--timeout", "nan"],
        {"suite.json": json.dumps(SUITE)},
    ),
    (
        "run concurrency 0",
        [*RUN, "--runs", "1", "--concurrency", "0"],
        {"suite.json": json.dumps(SUITE)},
    ),
    (
        "run unknown task kind",
        ["run", "{d}/suite.json", "--variant", "v=standn:shop-v1", "--runs", "1", "--out", "{d}/o"],
        {"suite.json": json.dumps(SUITE)},
    ),
    (
        "run variant without a name",
        ["run", "{d}/suite.json", "--variant", "standin:shop-v1", "--runs", "1", "--out", "{d}/o"],
        {"suite.json": json.dumps(SUITE)},
    ),
    (
        "run base_url with a broken IPv6 host",
        [
            "run",
            "{d}/suite.json",
            "--variant",
            "v=openai:gpt,base_url=http://[::1",
            "--runs",
            "1",
            "--out",
            "{d}/o",
        ],
        {"suite.json": json.dumps(SUITE)},
    ),
    (
        "run base_url with port 99999",
        [
            "run",
            "{d}/suite.json",
            "--variant",
            "v=openai:gpt,base_url=http://127.0.0.1:99999",
            "--runs",
            "1",
            "--out",
            "{d}/o",
        ],
        {"suite.json": json.dumps(SUITE)},
    ),
    (
        "run base_url not http",
        [
            "run",
            "{d}/suite.json",
            "--variant",
            "v=openai:gpt,base_url=ftp://x",
            "--runs",
            "1",
            "--out",
            "{d}/o",
        ],
        {"suite.json": json.dumps(SUITE)},
    ),
    (
        "run unknown setting",
        [
            "run",
            "{d}/suite.json",
            "--variant",
            "v=openai:gpt,temprature=0.2",
            "--runs",
            "1",
            "--out",
            "{d}/o",
        ],
        {"suite.json": json.dumps(SUITE)},
    ),
    (
        "run cmd with a typo placeholder",
        [
            "run",
            "{d}/suite.json",
            "--variant",
            "v=cmd:python {promt}",
            "--runs",
            "1",
            "--out",
            "{d}/o",
        ],
        {"suite.json": json.dumps(SUITE)},
    ),
    (
        "run cmd with a bad env name",
        [
            "run",
            "{d}/suite.json",
            "--variant",
            "v=cmd:python -c pass,env=A;B",
            "--runs",
            "1",
            "--out",
            "{d}/o",
        ],
        {"suite.json": json.dumps(SUITE)},
    ),
    (
        "run cmd program not found",
        [
            "run",
            "{d}/suite.json",
            "--variant",
            "v=cmd:no-such-program-x",
            "--runs",
            "1",
            "--out",
            "{d}/o",
        ],
        {"suite.json": json.dumps(SUITE)},
    ),
    (
        "run prefix file missing",
        [
            "run",
            "{d}/suite.json",
            "--variant",
            "v=standin:shop-v1,prefix=@{d}/none.txt",
            "--runs",
            "1",
            "--out",
            "{d}/o",
        ],
        {"suite.json": json.dumps(SUITE)},
    ),
    (
        "run out exists",
        [*RUN, "--runs", "1"],
        {"suite.json": json.dumps(SUITE), "out.jsonl": "someone's file\n"},
    ),
    (
        "run resume a missing file",
        ["run", "{d}/suite.json", "--variant", V, "--runs", "1", "--resume", "{d}/none.jsonl"],
        {"suite.json": json.dumps(SUITE)},
    ),
    # -- files read by the analyses
    ("report a missing file", ["report", "{d}/none.jsonl"], {}),
    ("report an empty file", ["report", "{d}/e.jsonl"], {"e.jsonl": ""}),
    ("report not JSON", ["report", "{d}/x.jsonl"], {"x.jsonl": "hello\nworld\n"}),
    ("report no manifest", ["report", "{d}/x.jsonl"], {"x.jsonl": '{"type": "sample"}\n'}),
    ("report level 0", ["report", "{d}/" + GOOD_RUN, "--level", "0"], {}),
    (
        "report plot through a planted link",
        ["report", "{d}/" + GOOD_RUN, "--plots", "{d}/plots"],
        {"plots/forest.png": "@link:{d}/victim.png", "victim.png": "do not overwrite"},
    ),
    ("compare unknown variant", ["compare", "{d}/" + GOOD_RUN, "--a", "x", "--b", "v"], {}),
    (
        "compare unknown method",
        ["compare", "{d}/" + GOOD_RUN, "--a", "v", "--b", "v", "--method", "best"],
        {},
    ),
    ("compare-runs missing", ["compare-runs", "{d}/" + GOOD_RUN, "{d}/none.jsonl"], {}),
    ("merge missing", ["merge", "{d}/" + GOOD_RUN, "{d}/none.jsonl", "--out", "{d}/m.jsonl"], {}),
    (
        "merge a file without a schedule",
        ["merge", "{d}/" + GOOD_RUN, "{d}/" + GOOD_RUN, "--out", "{d}/m.jsonl"],
        {},
    ),
    (
        "merge out exists",
        ["merge", "{d}/" + GOOD_RUN, "{d}/x.jsonl", "--out", "{d}/m.jsonl"],
        {"m.jsonl": "someone's file\n", "x.jsonl": "hello\n"},
    ),
    ("gate bad min-pass", ["gate", "{d}/" + GOOD_RUN, "--variant", "v", "--min-pass", "2"], {}),
    (
        "gate unknown variant",
        ["gate", "{d}/" + GOOD_RUN, "--variant", "x", "--min-pass", "0.5"],
        {},
    ),
    ("calibrate missing", ["calibrate", "{d}/none.csv"], {}),
    ("calibrate empty", ["calibrate", "{d}/c.csv"], {"c.csv": ""}),
    ("calibrate no columns", ["calibrate", "{d}/c.csv"], {"c.csv": "a,b\n1,2\n"}),
    (
        "calibrate bad observed",
        ["calibrate", "{d}/c.csv", "--observed", "3/2"],
        {"c.csv": "human,check\npass,pass\nfail,fail\n"},
    ),
    ("review a missing file", ["review", "{d}/none.jsonl", "--out", "{d}/r.jsonl"], {}),
    ("import a missing file", ["import", "{d}/none.json", "--out", "{d}/o.jsonl"], {}),
    ("standin unknown action", ["standin", "dance"], {}),
    ("standin bad port", ["standin", "serve", "--port", "99999"], {}),
    ("standin error rate 2", ["standin", "serve", "--error-rate", "2"], {}),
    ("demo runs 0", ["demo", "--runs", "0"], {}),
    ("demo unknown suite", ["demo", "--suite", "nope"], {}),
]


def plant(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if text.startswith("@link:"):
            os.symlink(text[len("@link:") :].replace("{d}", str(folder)), path)
        else:
            path.write_bytes(text.encode("utf-8", "surrogateescape"))


def good_run(folder: Path) -> None:
    with ResultsWriter.create(
        folder / GOOD_RUN,
        {"suite": {"name": "mini"}, "cases": ["a", "b"], "runs": 2, "variants": [{"name": "v"}]},
    ) as w:
        for case in ("a", "b"):
            for repeat in (0, 1):
                w.write_sample(sample(case, "v", repeat, repeat == 0, name="c"))
        w.close({"status": "finished"})


def snapshot(folder: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for top, dirs, files in os.walk(folder):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(top, d))]:
            path = os.path.join(top, name)
            rel = os.path.relpath(path, folder)
            out[rel] = (
                ("->" + os.readlink(path)) if os.path.islink(path) else Path(path).read_bytes()
            )
    return out


def test_the_table_is_large_enough():
    assert len(TABLE) >= 60
    assert len({row[0] for row in TABLE}) == len(TABLE)
    verbs = {row[1][0] for row in TABLE}
    assert verbs >= {"run", "report", "compare", "gate", "power", "plan", "calibrate", "review"}


@pytest.mark.parametrize(("argv", "files"), [row[1:] for row in TABLE], ids=[r[0] for r in TABLE])
def test_a_bad_input_gets_one_line_and_exit_2(tmp_path, capsys, monkeypatch, argv, files):
    monkeypatch.chdir(tmp_path)
    good_run(tmp_path)
    plant(tmp_path, files)
    before = snapshot(tmp_path)
    code = main([a.replace("{d}", str(tmp_path)) for a in argv])
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert "Traceback" not in err + out
    lines = err.splitlines()
    assert len(lines) == 1 and err.endswith("\n"), err
    assert lines[0].startswith("evalstats"), err
    assert len(lines[0]) < 1200  # a short prefix of any value, never the whole
    assert snapshot(tmp_path) == before


def test_sigterm_outside_a_run_is_one_line_and_changes_nothing(tmp_path, capsys, monkeypatch):
    import signal
    import time

    from evalstats.cli import _report

    good_run(tmp_path)
    before = snapshot(tmp_path)

    def slow_report(args):  # SIGTERM while a file is being read
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
        raise AssertionError("SIGTERM did not stop the command")

    monkeypatch.setattr(_report, "run", slow_report)
    assert main(["report", str(tmp_path / GOOD_RUN)]) == 143
    assert capsys.readouterr().err == "evalstats: terminated (SIGTERM)\n"
    assert snapshot(tmp_path) == before
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # put back as it was
