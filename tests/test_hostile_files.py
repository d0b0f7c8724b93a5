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
