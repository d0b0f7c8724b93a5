"""Hostile input files and concurrent runs: refused in one line, never waited on.

Every file evalstats reads goes through one bounded reader
(``evalstats._files``): a named pipe (FIFO), ``/dev/zero`` or another device,
and a folder are refused before they are opened, with one line naming the file
and exit status 2; nothing in the folder changes. The commands run in a child
process bounded in time and memory, so a reader that blocks on a FIFO or reads
``/dev/zero`` to the end fails the test instead of hanging it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import records

from evalstats._files import INPUT_LIMIT, check_input, open_input, read_input
from evalstats.errors import InvalidArgument

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")

#: Runs each argv of a JSON list through ``evalstats.cli.main`` in this one child,
#: each within a few seconds (SIGALRM interrupts a blocked open) and the child
#: within 2 GiB of address space (a read of /dev/zero fails instead of filling
#: the machine); prints one JSON line per argv: exit code, stdout, stderr.
CHILD = textwrap.dedent(
    """
    import contextlib, io, json, resource, signal, sys
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    from evalstats.cli import main

    class Hung(BaseException):
        pass

    def hung(*_):
        raise Hung()

    signal.signal(signal.SIGALRM, hung)
    for argv in json.loads(sys.argv[1]):
        out, err = io.StringIO(), io.StringIO()
        signal.alarm(8)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(argv)
        except Hung:
            code = "hung"
        except MemoryError:
            code = "memory"
        except BaseException as exc:
            code = f"raised {type(exc).__name__}: {exc}"
        finally:
            signal.alarm(0)
        print(json.dumps([argv, code, out.getvalue(), err.getvalue()]), flush=True)
    """
)


def run_child(argvs: list[list[str]], cwd: Path) -> list[tuple[list[str], object, str, str]]:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(argvs)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60 + 10 * len(argvs),
        env={**os.environ, "NO_COLOR": "1"},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [tuple(json.loads(line)) for line in proc.stdout.splitlines()]  # type: ignore[misc]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def small_run(path: Path) -> Path:
    outcomes = {"a": {"c1": [False], "c2": [True]}, "b": {"c1": [True], "c2": [True]}}
    return records.write(
        path,
        records.manifest(["c1", "c2"], ["a", "b"], 1),
        records.samples(outcomes),
        {"status": "finished"},
    )


def commands(bad: str) -> list[list[str]]:
    """Every command, with ``bad`` in each place that takes an input file."""
    run = ["run", "shop", "--runs", "1", "--no-progress"]
    return [
        ["report", bad],
        ["report", "r.jsonl", "--prices", bad],
        ["report", "r.jsonl", "--reviews", bad],
        ["compare", bad, "--a", "a", "--b", "b"],
        ["compare-runs", "r.jsonl", bad],
        ["gate", bad, "--variant", "a", "--min-pass", "0.5"],
        ["calibrate", bad],
        ["review", bad, "--out", "reviews.jsonl"],
        ["merge", "r.jsonl", bad, "--out", "merged.jsonl"],
        ["rescore", bad, "--suite", "shop", "--out", "rescored.jsonl"],
        ["import", bad, "--out", "imported.jsonl"],
        *(
            ["import", bad, "--format", fmt, "--out", "imported.jsonl"]
            for fmt in ("csv", "promptfoo", "lm-eval", "inspect", "parquet")
        ),
        ["run", bad, "--variant", "a=standin:shop-v1", "--runs", "1", "--out", "o.jsonl"],
        [*run, "--variant", f"a=standin:shop-v1,prefix=@{bad}", "--out", "o.jsonl"],
        [*run, "--variant", f"a=standin:shop-v1,system=@{bad}", "--out", "o.jsonl"],
        [*run, "--variant", "a=standin:shop-v1", "--prices", bad, "--out", "o.jsonl"],
        [*run, "--variant", "a=standin:shop-v1", "--resume", bad],
    ]


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_every_input_refuses_what_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    small_run(tmp_path / "r.jsonl")
    if kind == "fifo":
        os.mkfifo(tmp_path / "pipe")
        bad, word = "pipe", "named pipe (FIFO)"
    elif kind == "device":
        bad, word = os.devnull if not os.path.exists("/dev/zero") else "/dev/zero", "a device"
    else:
        (tmp_path / "adir").mkdir()
        bad, word = "adir", "folder"
    before = snapshot(tmp_path)
    results = run_child(commands(bad), tmp_path)
    assert len(results) == len(commands(bad))
    for argv, code, out, err in results:
        assert code == 2, (argv, code, out, err)
        assert "Traceback" not in out + err, argv
        assert err.count("\n") == 1 and err.startswith("evalstats"), (argv, err)
        if argv[:2] == ["run", bad]:
            # The suite's own finder says it before the reader is reached.
            assert "not a file" in err or word in err, (argv, err)
        elif kind == "folder":
            assert "folder" in err or "directory" in err.lower(), (argv, err)
        else:
            assert word in err and bad in err, (argv, err)
    assert snapshot(tmp_path) == before


def test_the_reader_refuses_before_opening_and_caps_the_size(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    # No writer: a blocking open would wait for ever; the check does not open it.
    with pytest.raises(InvalidArgument, match=r"pipe: is a named pipe \(FIFO\), not a suite"):
        check_input(fifo, what="a suite")
    with pytest.raises(InvalidArgument, match="named pipe"):
        open_input(fifo)
    with pytest.raises(FileNotFoundError):
        open_input(tmp_path / "missing")
    with pytest.raises(IsADirectoryError):
        open_input(tmp_path)
    big = tmp_path / "big"
    with open(big, "wb") as f:
        f.truncate(1 << 20)  # sparse: 1 MiB that takes no disk
    assert read_input(big, limit=1 << 20) == bytes(1 << 20)
    with pytest.raises(InvalidArgument, match=r"big: holds more than 1023 KiB; a log is read"):
        read_input(big, what="a log", limit=(1 << 20) - 1024)
    assert INPUT_LIMIT >= 1 << 20


def test_a_sparse_prompt_file_past_the_cap_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalstats.cli import main

    big = tmp_path / "prefix.txt"
    with open(big, "wb") as f:
        f.truncate(64 << 20)  # sparse: larger than a prompt may be, no disk used
    code = main(
        [
            "run",
            "shop",
            "--variant",
            f"a=standin:shop-v1,prefix=@{big}",
            "--runs",
            "1",
            "--out",
            str(tmp_path / "o.jsonl"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "prefix file" in err and "holds more than 16 MiB" in err
    assert not (tmp_path / "o.jsonl").exists()


# --- a resume never decides about a file another run is still writing --------------

#: Begins a results file the way ``run`` does, its schedule written in pieces as
#: the slots come, and stops midway through the manifest line (holding the file's
#: lock, as a run does for its whole life) until ``go`` exists; then finishes it.
WRITER = textwrap.dedent(
    """
    import os, sys, time
    sys.path.insert(0, sys.argv[3])
    import records
    from evalstats.results._file import ResultsWriter

    path, go = sys.argv[1], sys.argv[2]
    manifest = records.manifest(["c1"], ["a"], 1)
    manifest.pop("schedule")

    def schedule():
        for i in range(5000):
            yield ["c1", 0, i, 0, "a"]
        print("midway", flush=True)  # 4096 slots are on disk; the line has no end yet
        deadline = time.monotonic() + 60
        while not os.path.exists(go) and time.monotonic() < deadline:
            time.sleep(0.02)

    with ResultsWriter.create(path, manifest, schedule=schedule()) as w:
        pass
    print("done", flush=True)
    """
)


def test_resume_refuses_a_file_whose_manifest_another_run_is_writing(tmp_path: Path) -> None:
    out, go = tmp_path / "run.jsonl", tmp_path / "go"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(out), str(go), str(Path(__file__).parent)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == "midway"
        head = out.read_bytes()
        assert head.startswith(b'{"type":"manifest"') and b"\n" not in head  # cut, for now
        resumer = subprocess.run(
            [
                sys.executable,
                "-m",
                "evalstats",
                "run",
                "shop",
                "--variant",
                "a=standin:shop-v1",
                "--runs",
                "1",
                "--no-progress",
                "--resume",
                str(out),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert resumer.returncode == 2, resumer.stderr
        assert resumer.stderr.count("\n") == 1, resumer.stderr
        assert "is being written by another evalstats run" in resumer.stderr
        assert out.read_bytes().startswith(head)  # neither removed nor rewritten
        go.touch()
        assert writer.stdout.readline().strip() == "done"
        assert writer.wait(timeout=60) == 0
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    first = out.read_bytes().split(b"\n", 1)[0]
    assert len(json.loads(first)["schedule"]) == 5000  # the first run's file, whole


# --- wrong answers without a word: refused in one line, or read as documented -------


def one_line(argv: list[str], capsys: pytest.CaptureFixture[str], folder: Path) -> str:
    """Run ``argv`` in-process: exit 2, one line, no traceback, nothing in ``folder`` changed."""
    from evalstats.cli import main

    before = snapshot(folder)
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert "Traceback" not in out + err
    assert err.count("\n") == 1 and err.startswith("evalstats"), err
    assert snapshot(folder) == before
    return err


PLANNED = {"a": {"c1": [True, False], "c2": [False, True]}, "b": {"c1": [True, True]}}


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (records.sample("c1", "z", 0, True), "variant 'z', repeat 0"),
        (records.sample("zz", "a", 0, True), "case 'zz', variant 'a'"),
        (records.sample("c1", "a", 7, True), "variant 'a', repeat 7"),
        (records.sample("c2", "b", 0, None), "case 'c2', variant 'b', repeat 0"),
    ],
    ids=["variant", "case", "repeat", "slot-not-scheduled"],
)
@pytest.mark.parametrize("verb", ["report", "compare", "gate", "review"])
def test_a_sample_the_manifest_does_not_plan_is_refused_naming_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: dict, named: str, verb: str
) -> None:
    manifest = records.manifest(["c1", "c2"], ["a", "b"], 2)
    manifest["schedule"] = [s for s in manifest["schedule"] if not (s[0] == "c2" and s[4] == "b")]
    samples = records.samples(PLANNED)
    path = records.write(tmp_path / "r.jsonl", manifest, [*samples, extra], {"status": "finished"})
    argv = {
        "report": ["report", str(path)],
        "compare": ["compare", str(path), "--a", "a", "--b", "b"],
        "gate": ["gate", str(path), "--variant", "a", "--min-pass", "0.1"],
        "review": ["review", str(path), "--out", str(tmp_path / "reviews.jsonl")],
    }[verb]
    err = one_line(argv, capsys, tmp_path)
    assert not (tmp_path / "reviews.jsonl").exists()  # refused before the reviews file
    assert f"r.jsonl: line {len(samples) + 2}: a sample of {named}" in err or (
        f"line {len(samples) + 2}: a sample of" in err and named in err
    ), err
    assert "did not plan" in err


def test_a_file_without_a_schedule_is_held_to_its_lists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = records.manifest(["c1", "c2"], ["a", "b"], 2)
    del manifest["schedule"]
    fine = records.write(tmp_path / "fine.jsonl", manifest, records.samples(PLANNED), None)
    from evalstats.reading._source import tally

    assert tally(fine).counts("a").completed == 4
    # the lists may hold the names and ids themselves
    plain = dict(manifest, variants=["a", "b"], cases=["c1", "c2"])
    named = records.write(tmp_path / "named.jsonl", plain, records.samples(PLANNED), None)
    assert tally(named).counts("b").completed == 2
    bad = records.write(
        tmp_path / "bad.jsonl",
        manifest,
        [*records.samples(PLANNED), records.sample("c1", "b", 2, True)],
        None,
    )
    err = one_line(["report", str(bad)], capsys, tmp_path)
    assert "line 8: a sample of case 'c1', variant 'b', repeat 2" in err
    assert "the manifest has 2 runs" in err


@pytest.mark.parametrize(
    ("method", "said"),
    [
        ("2", "\"counting_method\" is '2'; this evalstats counts samples by method '1' only"),
        ("", "\"counting_method\" is ''"),
        (2, '"counting_method" must be a string such as "1", not 2'),
        (1, '"counting_method" must be a string such as "1", not 1'),
        (["1"], '"counting_method" must be a string'),
    ],
)
def test_an_unknown_counting_method_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], method: object, said: str
) -> None:
    from evalstats.results._file import COUNTING_METHOD
    from evalstats.results._records import COUNTING_METHODS

    assert COUNTING_METHOD in COUNTING_METHODS  # what this evalstats writes, it reads
    manifest = dict(records.manifest(["c1", "c2"], ["a", "b"], 2), counting_method=method)
    path = records.write(tmp_path / "r.jsonl", manifest, records.samples(PLANNED), None)
    for argv in (["report", str(path)], ["merge", str(path), str(path), "--out", "m.jsonl"]):
        err = one_line(argv, capsys, tmp_path)
        assert "line 1: the manifest's " + said in err, err


def test_lone_surrogates_in_the_manifest_and_the_answers_are_shown_not_fatal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalstats.cli import main

    manifest = dict(records.manifest(["c1", "c2"], ["a", "b"], 2), machine="box \udc80")
    manifest["suite"]["name"] = "suite \ud800"
    samples = [dict(s, answer=f"said \udfff{i}") for i, s in enumerate(records.samples(PLANNED))]
    path = records.write(tmp_path / "r.jsonl", manifest, samples, {"status": "finished"})
    assert b"\\udc80" in path.read_bytes()  # a JSON text may spell one; UTF-8 cannot hold it
    assert main(["report", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "suite \\ud800" in out and "Traceback" not in err
    assert main(["report", str(path), "--html", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "\\ud800" in page and "\\udc80" in page
    assert main(["compare", str(path), "--a", "a", "--b", "b"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("where", ["answer", "trace", "extra"])
def test_the_writer_never_writes_a_line_its_reader_refuses(tmp_path: Path, where: str) -> None:
    from evalstats.results._file import ResultsWriter, read_results
    from evalstats.results._recordable import MAX_DEPTH

    deep: list = []
    inner = deep
    for _ in range(990):  # within json.dumps' reach, beyond the readers'
        inner.append([])
        inner = inner[0]
    manifest = records.manifest(["c1"], ["a"], 1)
    with ResultsWriter.create(tmp_path / "r.jsonl", manifest) as w:
        w.write_sample({**records.sample("c1", "a", 0, True), where: deep})
        w.close({"status": "finished"})
    read = read_results(tmp_path / "r.jsonl")
    (notes,) = read.samples[0]["recording_notes"]
    assert notes.endswith(f"nested deeper than {MAX_DEPTH} levels; cut there")
    from evalstats.reading._source import tally

    assert tally(tmp_path / "r.jsonl").counts("a").completed == 1


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_a_line_nested_past_the_reader_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], depth: int
) -> None:
    path = small_run(tmp_path / "r.jsonl")
    lines = path.read_text().splitlines()
    lines[2] = lines[2][:-1] + ', "answer": ' + "[" * depth + "]" * depth + "}"
    path.write_text("\n".join(lines) + "\n")
    for argv in (["report", str(path)], ["gate", str(path), "--variant", "a", "--min-pass", "0"]):
        err = one_line(argv, capsys, tmp_path)
        assert "r.jsonl: line 3: nested too deep to read as a record" in err


def test_a_latency_of_1e308_seconds_is_reported_as_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalstats.cli import main

    samples = [dict(s, latency_s=1e308) for s in records.samples(PLANNED)]
    path = records.write(
        tmp_path / "r.jsonl", records.manifest(["c1", "c2"], ["a", "b"], 2), samples
    )
    assert main(["report", str(path), "--html", str(tmp_path / "r.html")]) == 0
    out, err = capsys.readouterr()
    assert "median 1e+308 s" in out and "Traceback" not in err


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("m: {input: 1, output: 2}\nwhen: 2024-02-30\n", "a value cannot be read (day is out"),
        ("m: {input: " + "9" * 5000 + ", output: 1}\n", "a value cannot be read (Exceeds"),
        ("m: " + "[" * 5000 + "]" * 5000 + "\n", "not valid YAML at line 1"),
        ("m:\n" + "".join(" " * (i + 1) + "a:\n" for i in range(1500)), "not valid YAML"),
    ],
    ids=["impossible-date", "5000-digits", "deep-flow", "deep-block"],
)
def test_a_hostile_prices_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, said: str
) -> None:
    path = small_run(tmp_path / "r.jsonl")
    (tmp_path / "prices.yaml").write_text(text)
    err = one_line(
        ["report", str(path), "--prices", str(tmp_path / "prices.yaml")], capsys, tmp_path
    )
    assert "prices=" in err and said in err, err


@pytest.mark.parametrize("where", ["variant", "judge"])
@pytest.mark.parametrize("bad", ["\r\nX-Injected: 1", "/x\ny", "\x00", "/a b"])
def test_a_base_url_with_a_line_break_or_control_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, bad: str
) -> None:
    url = f"base_url=http://127.0.0.1:9/v1{bad}"
    variant = f"a=openai:m,{url}" if where == "variant" else "a=standin:shop-v1"
    argv = ["run", "shop", "--variant", variant, "--runs", "1", "--out", "o.jsonl"]
    if where == "judge":
        argv = ["run", str(JUDGED), "--variant", variant, "--judge", f"openai:m,{url}"]
        argv += ["--runs", "1", "--out", "o.jsonl"]
    err = one_line(argv, capsys, tmp_path)
    assert "holds the character U+" in err and "a URL is one line" in err


JUDGED = Path(__file__).resolve().parent.parent / "cases" / "judged.yaml"


def test_a_dead_judge_stops_the_run_at_its_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = ["run", str(JUDGED), "--variant", "a=standin:shop-v1", "--runs", "1"]
    argv += ["--judge", f"openai:m,base_url=http://127.0.0.1:{port}/v1"]
    argv += ["--out", str(tmp_path / "o.jsonl"), "--no-progress"]
    err = one_line(argv, capsys, tmp_path)
    assert f"--judge openai:m,base_url=http://127.0.0.1:{port}/v1: openai: nothing answers" in err
    assert "(no sample was run)" in err
    assert not (tmp_path / "o.jsonl").exists()


def test_rescore_of_a_sample_whose_case_the_manifest_lacks_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalstats.cli import main

    run = tmp_path / "run.jsonl"
    argv = ["run", "shop", "--variant", "a=standin:shop-v1", "--runs", "1", "--no-progress"]
    assert main([*argv, "--out", str(run)]) == 0
    capsys.readouterr()
    lines = run.read_text().splitlines()
    ghost = json.loads(lines[1]) | {"case": "ghost"}
    run.write_text("\n".join([*lines[:-1], json.dumps(ghost), lines[-1]]) + "\n")
    out = tmp_path / "rescored.jsonl"
    err = one_line(["rescore", str(run), "--suite", "shop", "--out", str(out)], capsys, tmp_path)
    assert "run.jsonl: a sample of case 'ghost', variant 'a', repeat 0, which the run's" in err


def test_import_of_an_evalstats_results_file_says_to_use_it_directly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = small_run(tmp_path / "r.jsonl")
    for extra in ([], ["--format", "evalstats"]):
        err = one_line(["import", str(path), *extra, "--out", "o.jsonl"], capsys, tmp_path)
        assert "r.jsonl: is already an evalstats results file; give it to report" in err


# --- outputs of commands killed midway, or on a full disk ---------------------------

#: Writes a results file with write_results (what merge, rescore and import --out
#: use), killing itself with SIGKILL after ``n`` samples.
KILLED = textwrap.dedent(
    """
    import os, signal, sys
    sys.path.insert(0, sys.argv[3])
    import records
    from evalstats.results import _file
    from evalstats.reading._logs import write_results

    outcomes = {"a": {f"c{i}": [True] * 3 for i in range(40)}}
    results = records.results(outcomes)
    written = [0]
    real = _file.ResultsWriter.write_sample

    def write_sample(self, record):
        real(self, record)
        written[0] += 1
        if written[0] == int(sys.argv[2]):
            os.kill(os.getpid(), signal.SIGKILL)

    _file.ResultsWriter.write_sample = write_sample
    write_results(results, sys.argv[1])
    """
)


@pytest.mark.parametrize("after", [1, 60])
def test_a_killed_merge_rescore_or_import_leaves_no_file_for_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], after: int
) -> None:
    from evalstats.cli import main

    out = tmp_path / "out.jsonl"
    proc = subprocess.run(
        [sys.executable, "-c", KILLED, str(out), str(after), str(Path(__file__).parent)],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == -9, proc.stderr
    assert not out.exists()  # only a hidden temporary file, never the target
    assert main(["gate", str(out), "--variant", "a", "--min-pass", "0.5"]) == 2
    assert "no such" in capsys.readouterr().err


def test_write_results_is_whole_or_absent(tmp_path: Path) -> None:
    from evalstats.errors import ResultsFileError
    from evalstats.reading._logs import write_results

    results = records.results({"a": {"c1": [True, False]}})
    path = write_results(results, tmp_path / "r.jsonl")
    assert os.listdir(tmp_path) == ["r.jsonl"]
    with pytest.raises(ResultsFileError, match="already exists; results are never overwritten"):
        write_results(results, path)
    with pytest.raises(ResultsFileError, match="the folder .*missing does not exist"):
        write_results(results, tmp_path / "missing" / "r.jsonl")
    assert os.listdir(tmp_path) == ["r.jsonl"]


@pytest.mark.parametrize("option", ["--html", "--plots"])
def test_report_outputs_on_a_full_disk_leave_nothing_behind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, option: str
) -> None:
    import errno

    from evalstats.cli import main

    path = small_run(tmp_path / "r.jsonl")
    target = tmp_path / ("r.html" if option == "--html" else "figures")
    if option == "--plots":
        target.mkdir()

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    err = one_line(["report", str(path), option, str(target)], capsys, tmp_path)
    assert "No space left on device" in err
    monkeypatch.undo()
    leftovers = sorted(p.name for p in tmp_path.rglob("*"))
    assert leftovers == sorted(["r.jsonl"] + (["figures"] if option == "--plots" else []))
    assert main(["report", str(path), option, str(target)]) == 0  # the rerun is not blocked
    capsys.readouterr()


@pytest.mark.parametrize(
    ("name", "text", "argv"),
    [
        ("pf.json", '{"evalId": "x", "results": %s}', ["import", "{f}", "--out", "o.jsonl"]),
        (
            "lm.jsonl",
            '{"doc_id": 1, "x": %s}',
            ["import", "{f}", "--format", "lm-eval", "--out", "o.jsonl"],
        ),
        ("cal.jsonl", '{"human": %s}', ["calibrate", "{f}"]),
        (
            "suite.json",
            '{"name": "s", "cases": %s}',
            ["run", "{f}", "--variant", "a=standin:shop-v1", "--runs", "1", "--out", "o.jsonl"],
        ),
    ],
    ids=["promptfoo", "lm-eval", "calibrate", "suite"],
)
def test_a_document_nested_past_its_parser_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, argv: list[str]
) -> None:
    path = tmp_path / name
    path.write_text(text % ("[" * 5000 + "]" * 5000) + "\n")
    err = one_line([a.replace("{f}", str(path)) for a in argv], capsys, tmp_path)
    assert name in err and ("nested too deep" in err or "nested too deeply" in err), err


def test_a_results_line_with_a_5000_digit_integer_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = small_run(tmp_path / "r.jsonl")
    lines = path.read_text().splitlines()
    lines[1] = lines[1][:-1] + ', "tokens": {"input": ' + "9" * 5000 + "}}"
    path.write_text("\n".join(lines) + "\n")
    err = one_line(["report", str(path)], capsys, tmp_path)
    assert "r.jsonl: line 2 cannot be read: Exceeds the limit (4300 digits)" in err
    assert "not valid JSON" not in err  # it is JSON; Python will not make the number
