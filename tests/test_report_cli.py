"""The reading verbs of the command (report, compare, compare-runs, gate, changed) and plots."""

from __future__ import annotations

import json
import subprocess

import pytest
from records import sample
from strategies import results_manifest, write_results_file

from evalstats.cli import main
from evalstats.deciding._compare_results import compare_results
from evalstats.presenting._plots import forest_plot, paired_difference_plot, report_plots
from evalstats.presenting._report import report
from evalstats.stats._compare import compare

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


#: How these runs' samples were recorded: one check "x" on the content.
AS_RUN = {"axis": "content", "missed": "missed", "latency_s": 0.5}


@pytest.fixture
def run_file(tmp_path):
    """v1 passes 6 of 10 on each case, v2 all 10; one unmeasured sample of v2."""
    manifest = results_manifest(["order", "refund"], ["v1", "v2"], 10)
    samples = []
    for case in ("order", "refund"):
        for r in range(10):
            samples.append(sample(case, "v1", r, r < 6, answer="SECRET-ANSWER-93", **AS_RUN))
            status = "unmeasured" if (case, r) == ("refund", 9) else "completed"
            samples.append(sample(case, "v2", r, status=status, answer="fine answer", **AS_RUN))
    return write_results_file(
        tmp_path / "results.jsonl", manifest, samples, {"status": "finished", "reason": None}
    )


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- report -------------------------------------------------------------------------------


def test_report_prints_the_table(run_file, capsys):
    code, out, err = _run(capsys, "report", str(run_file))
    assert code == 0 and err == ""
    assert out.strip() == str(report(run_file))
    assert "SECRET-ANSWER-93" not in out


def test_report_json(run_file, capsys):
    code, out, _ = _run(capsys, "report", str(run_file), "--json", "--level", "0.9")
    assert code == 0
    doc = json.loads(out)
    assert doc.pop("schema") == "evalstats.report/2"
    assert doc == json.loads(json.dumps(report(run_file, level=0.9).to_dict()))
    assert doc["variants"][1]["unmeasured"] == 1
    assert "SECRET-ANSWER-93" not in out


def test_report_plot_writes_pngs(run_file, tmp_path, capsys):
    folder = tmp_path / "plots" / "here"
    code, out, err = _run(capsys, "report", str(run_file), "--json", "--plots", str(folder))
    assert code == 0
    json.loads(out)  # stdout stays one JSON document; the paths go to stderr
    for name in ("forest.png", "paired-differences.png"):
        data = (folder / name).read_bytes()
        assert data.startswith(PNG_SIGNATURE) and len(data) > 5000
        assert name in err


def test_report_errors_exit_2(tmp_path, capsys):
    code, _, err = _run(capsys, "report", str(tmp_path / "missing.jsonl"))
    assert code == 2 and "no such results file" in err and err.count("\n") == 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n{}\n")
    code, _, err = _run(capsys, "report", str(bad))
    assert code == 2 and "bad.jsonl" in err
    code, _, err = _run(capsys, "report", str(bad), "--level", "95")
    assert code == 2 and "level=95" in err


# --- compare --------------------------------------------------------------------------------


def test_compare_prints_both_verdicts(run_file, capsys):
    code, out, _ = _run(capsys, "compare", str(run_file), "--a", "v1", "--b", "v2")
    assert code == 0
    assert out.strip() == str(compare_results(run_file, "v1", "v2"))
    assert "these cases:" in out and "cases like these:" in out
    assert "1 dropped because a side was unmeasured" in out


def test_compare_json_and_method(run_file, capsys):
    code, out, _ = _run(
        capsys,
        "compare",
        str(run_file),
        "--a",
        "v1",
        "--b",
        "v2",
        "--method",
        "clustered",
        "--json",
    )
    assert code == 0
    doc = json.loads(out)
    assert doc["primary"]["method"] == "clustered" and doc["pairs"] == 19
    code, _, err = _run(capsys, "compare", str(run_file), "--a", "v1", "--b", "v3")
    assert code == 2 and "b='v3'" in err and "did you mean" in err
    code, _, err = _run(capsys, "compare", str(run_file), "--a", "v1")
    assert code == 2 and "--b" in err


# --- compare-runs -----------------------------------------------------------------------------


def test_compare_runs_verb(run_file, tmp_path, capsys):
    code, out, _ = _run(capsys, "compare-runs", str(run_file), str(run_file))
    assert code == 0 and "variant v1: can't tell yet" in out
    other = tmp_path / "other.jsonl"
    lines = run_file.read_text().splitlines()
    manifest = json.loads(lines[0])
    manifest["machine"] = "another machine"
    other.write_text("\n".join([json.dumps(manifest), *lines[1:]]) + "\n")
    code, out, _ = _run(capsys, "compare-runs", str(run_file), str(other))
    assert code == 1  # not comparable: exit 1, so CI can tell
    assert out.startswith("no comparable previous run: machine differs")
    code, out, _ = _run(capsys, "compare-runs", str(run_file), str(other), "--json")
    assert code == 1 and json.loads(out)["differences"] == ["machine"]
    code, out, _ = _run(
        capsys, "compare-runs", str(run_file), str(other), "--allow-different", "machine"
    )
    assert code == 0
    assert out.splitlines()[1].startswith("warning: compared although the machine differs")
    code, _, err = _run(
        capsys, "compare-runs", str(run_file), str(other), "--allow-different", "machin"
    )
    assert code == 2 and err.count("\n") == 1 and "did you mean 'machine'" in err
    code, out, _ = _run(
        capsys, "compare-runs", str(run_file), str(run_file), "--variant", "v2", "--json"
    )
    assert list(json.loads(out)["comparisons"]) == ["v2"]


# --- gate ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code", "text"),
    [
        (["--variant", "v2", "--min-pass", "0.9"], 0, "gate passed"),
        (["--variant", "v1", "--min-pass", "0.9"], 1, "pass rate is 60%, below 90%"),
        # v2 passed 19 of 19: Wilson lower bounds 83% at 95% and 74% at 99%
        (["--variant", "v2", "--min-pass", "0.8", "--on", "lower-bound"], 0, "gate passed"),
        (
            ["--variant", "v2", "--min-pass", "0.8", "--on", "lower-bound", "--level", "0.99"],
            1,
            "lower bound of the 99% per-trial interval",
        ),
        (["--variant", "v1", "--min-pass", "0.5", "--every-case-passes"], 0, "every case"),
        (
            ["--variant", "v1", "--no-regression-vs", "v2", "--margin", "0.05"],
            1,
            "'v1' is worse than 'v2' by more than 5%",
        ),
        (
            ["--variant", "v2", "--min-pass", "0.5", "--no-regression-vs", "v1", "--margin", "0"],
            0,
            "'v2' is not worse than 'v1' by more than 0%",
        ),
        (["--variant", "v2", "--no-regression-vs", "v1"], 2, "margin=None"),
        (["--variant", "v2", "--no-regression-vs", "v1", "--margin", "1"], 2, "margin=1.0"),
        (["--variant", "v2", "--no-regression-vs", "v1", "--margin", "-0.1"], 2, "margin=-0.1"),
        (["--variant", "v2", "--min-pass", "90"], 2, "min_pass=90"),
        (["--variant", "v9", "--min-pass", "0.9"], 2, "variant='v9'"),
        (["--variant", "v2", "--min-pass", "0.9", "--on", "lower"], 2, "lower-bound"),
        (["--variant", "v2"], 2, "min_pass=None"),
    ],
)
def test_gate_exit_codes(run_file, capsys, args, code, text):
    got, out, err = _run(capsys, "gate", str(run_file), *args)
    assert got == code
    assert text in (out if code in (0, 1) else err)


def test_gate_json(run_file, capsys):
    code, out, _ = _run(
        capsys, "gate", str(run_file), "--variant", "v1", "--min-pass", "0.9", "--json"
    )
    assert code == 1
    doc = json.loads(out)
    assert doc["passed"] is False and len(doc["reasons"]) == 1


# --- changed --------------------------------------------------------------------------------


def _git(repo, *args):
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def test_changed_exit_codes(tmp_path, monkeypatch, capsys):
    _git(tmp_path, "init", "-q")
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "system.txt").write_text("be brief\n")
    (tmp_path / "other.txt").write_text("x\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "first")
    monkeypatch.chdir(tmp_path)
    assert _run(capsys, "changed", "--since", "HEAD", "prompts")[0] == 1
    (tmp_path / "prompts" / "system.txt").write_text("be kind\n")
    code, out, _ = _run(capsys, "changed", "--since", "HEAD", "prompts", "other.txt")
    assert code == 0 and "changed" in out
    # A path that names nothing, now or at the ref, is refused, not "unchanged":
    # a typo in a CI recipe would otherwise skip the eval for ever.
    code, out, err = _run(capsys, "changed", "--since", "HEAD", "prompts", "tools")
    assert code == 2 and out == "" and "'tools' names no file or folder" in err
    assert len(err.strip().splitlines()) == 1
    assert _run(capsys, "changed", "--since", "HEAD", "other.txt")[0] == 1
    code, _, err = _run(capsys, "changed", "--since", "no-such-ref", "prompts")
    assert code == 2 and "ref='no-such-ref'" in err
    code, _, err = _run(capsys, "changed", "prompts")
    assert code == 2 and "--since" in err
    code, _, err = _run(capsys, "changed", "--since", "HEAD")
    assert code == 2


# --- plots ------------------------------------------------------------------------------------


def _png(path):
    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    assert len(data) > 5000  # a drawn figure, not an empty canvas
    return data


def test_forest_plot_writes_a_png(run_file, tmp_path):
    out = forest_plot(report(run_file), tmp_path / "forest.png")
    assert out == tmp_path / "forest.png"
    _png(out)


def test_paired_difference_plot_takes_either_comparison(run_file, tmp_path):
    _png(paired_difference_plot(compare_results(run_file, "v1", "v2"), tmp_path / "a.png"))
    plain = compare({"c": [True, False] * 5}, {"c": [True] * 10})
    _png(paired_difference_plot(plain, tmp_path / "b.png"))


def test_report_plots_with_one_variant_and_nothing_measured(tmp_path):
    manifest = results_manifest(["c1", "c2"], ["only"], 2)
    samples = [sample("c1", "only", r, None, **AS_RUN) for r in range(2)]
    path = write_results_file(tmp_path / "r.jsonl", manifest, samples)
    written = report_plots(path, tmp_path / "figs")
    assert [p.name for p in written] == ["forest.png"]
    _png(written[0])


# --- on files written by the engine ----------------------------------------------------------


def test_reading_verbs_on_engine_runs(tmp_path, capsys):
    from evalstats.running._engine import run

    variants = ["v1=standin:shop-v1", "v2=standin:shop-v2"]
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    run("shop", variants, runs=3, out=first, progress=False)
    run("shop", variants, runs=3, out=second, progress=False, seed=1)
    rep = report(first)
    assert [v.variant for v in rep.variants] == ["v1", "v2"]
    assert all(v.measured == 12 and v.unmeasured == 0 for v in rep.variants)
    assert rep.status == "finished" and rep.warnings == ()
    code, out, _ = _run(capsys, "report", str(first))
    assert code == 0 and "cases like these" in out
    cmp = compare_results(first, "v1", "v2")
    assert cmp.paired and cmp.pairs == 12
    # same suite, stand-ins, counting method and machine: comparable
    code, out, _ = _run(capsys, "compare-runs", str(first), str(second), "--json")
    assert code == 0 and json.loads(out)["comparable"] is True
    code, _, _ = _run(
        capsys,
        "gate",
        str(first),
        "--variant",
        "v2",
        "--min-pass",
        "0.0",
        "--no-regression-vs",
        "v1",
        "--margin",
        "0.5",
    )
    assert code == 0


def test_read_only_verbs_as_a_command_print_everything_and_keep_their_exit_code(run_file, capsys):
    # As the evalstats command, a read-only verb ends the process itself once its
    # output is flushed (no interpreter teardown): nothing may be lost, and the
    # exit status stays the verb's.
    import subprocess
    import sys

    for argv, code in (
        (["report", str(run_file), "--json"], 0),
        (["gate", str(run_file), "--variant", "v1", "--min-pass", "0.9"], 1),
        (["compare", str(run_file), "--a", "v1", "--b", "v2"], 0),
        (["report", str(run_file), "--level", "95"], 2),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "evalstats", *argv],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == code, (argv, done.stderr)
        assert main(argv) == code
        out, err = capsys.readouterr()
        assert done.stdout == out and done.stderr == err
