"""The results file: exclusive creation, mode 0600, durability, reading, resuming."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import records
from hypothesis import given, settings
from hypothesis import strategies as st

from evalstats.errors import InvalidArgument, ResultsFileError
from evalstats.results._file import (
    COUNTING_METHOD,
    FORMAT_VERSION,
    NO_SUMMARY_WARNING,
    TRUNCATED_WARNING,
    Results,
    ResultsWriter,
    environment,
    machine_fingerprint,
    read_results,
    sample_passed,
)

CASES = ("refund request", "order status", "rude customer")
VARIANTS = ("a", "b")


def manifest(runs: int = 2) -> dict:
    schedule = [
        [case, r, r * len(CASES) + i, pos, v]
        for r in range(runs)
        for i, case in enumerate(CASES)
        for pos, v in enumerate(VARIANTS if (i + r) % 2 == 0 else VARIANTS[::-1])
    ]
    return {
        "suite": {"name": "shop", "version": 1, "path": "cases/shop.json", "sha256": "ab" * 32},
        "cases": [{"id": c, "prompt": f"prompt of {c}"} for c in CASES],
        "include_holdout": False,
        "variants": [{"name": v, "task": {"kind": "python", "name": "t"}} for v in VARIANTS],
        "runs": runs,
        "schedule": schedule,
        "seed": 0,
    }


def sample(case: str, variant: str, repeat: int, status: str = "completed", *checks: str) -> dict:
    """A sample as the engine writes it (without its "type"), its prompt and answer in Unicode."""
    record = records.sample(
        case,
        variant,
        repeat,
        status=status,
        checks=[records.check(s, f"c{i}") for i, s in enumerate(checks or ("passed",))],
        reason=None,
        pair=repeat * len(CASES) + CASES.index(case) if case in CASES else 0,
        prompt={"system": None, "messages": [{"role": "user", "content": "héllo ✓"}]},
        answer=None if status == "unmeasured" else "an answer, with ünïcode",
        latency_s=0.25,
    )
    return strip(record)


def all_samples(runs: int = 2) -> list[dict]:
    out = []
    for r in range(runs):
        for i, case in enumerate(CASES):
            for v in VARIANTS:
                status = "unmeasured" if (i, r, v) == (2, 1, "b") else "completed"
                verdict = "failed" if (i + r) % 3 == 0 and v == "a" else "passed"
                out.append(sample(case, v, r, status, verdict))
    return out


def write_run(path: Path, samples: list[dict], *, summary: dict | None = None) -> None:
    with ResultsWriter.create(path, manifest()) as w:
        for s in samples:
            w.write_sample(s)
        w.close(summary if summary is not None else {"status": "finished", "samples": len(samples)})


def strip(record: dict) -> dict:
    return {k: v for k, v in record.items() if k != "type"}


# --- writing and reading back ---------------------------------------------------


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    samples = all_samples()
    write_run(path, samples)
    results = read_results(path)
    assert isinstance(results, Results)
    assert results.path == str(path)
    assert results.warnings == ()
    assert results.manifest["type"] == "manifest"
    assert results.manifest["format"] == FORMAT_VERSION == 1
    assert results.manifest["counting_method"] == COUNTING_METHOD
    assert results.manifest["schedule"] == manifest()["schedule"]
    assert [strip(s) for s in results.samples] == samples
    assert all(s["type"] == "sample" for s in results.samples)
    assert results.summary == {"type": "summary", "status": "finished", "samples": len(samples)}
    assert results.variants() == ("a", "b")


def test_file_layout_is_one_compact_json_object_per_line(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    write_run(path, all_samples(1))
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    lines = raw.decode("utf-8").splitlines()
    assert len(lines) == 1 + 6 + 1
    types = [json.loads(line)["type"] for line in lines]
    assert types == ["manifest"] + ["sample"] * 6 + ["summary"]
    # the type comes first, separators are compact, non-ASCII text is kept as is
    assert lines[0].startswith('{"type":"manifest","format":1,')
    assert lines[1].startswith('{"type":"sample","case":')
    assert "héllo ✓" in lines[1] and ", " not in lines[1].split('"answer"')[0]


def test_manifest_format_and_counting_method_are_not_overridden_silently(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument, match="format=2"):
        ResultsWriter.create(tmp_path / "x.jsonl", {"format": 2})
    with pytest.raises(InvalidArgument, match="type='sample'"):
        ResultsWriter.create(tmp_path / "x.jsonl", {"type": "sample"})
    assert not (tmp_path / "x.jsonl").exists()
    # A method this evalstats does not count by is never written (its reader refuses it).
    with pytest.raises(InvalidArgument, match="\"counting_method\" is '0'; this evalstats"):
        ResultsWriter.create(tmp_path / "y.jsonl", {"counting_method": "0"})
    assert not (tmp_path / "y.jsonl").exists()


def test_nan_is_written_as_text_with_a_note_and_unserialisable_values_are_refused(
    tmp_path: Path,
) -> None:
    with ResultsWriter.create(tmp_path / "r.jsonl", manifest()) as w:
        bad = sample("order status", "a", 0)
        bad["latency_s"] = float("nan")
        w.write_sample(bad)
        bad["latency_s"] = object()
        with pytest.raises(InvalidArgument, match="cannot be written as JSON"):
            w.write_sample(bad)
        w.close({"status": "finished"})
    (written,) = read_results(tmp_path / "r.jsonl").samples
    assert written["latency_s"] == "NaN"
    assert written["recording_notes"] == [
        "sample.latency_s: NaN is not a JSON number; written as the string"
    ]


@pytest.mark.parametrize("key", ["case", "variant", "repeat", "status", "checks"])
def test_writer_refuses_a_sample_without_a_required_key(tmp_path: Path, key: str) -> None:
    with ResultsWriter.create(tmp_path / "r.jsonl", manifest()) as w:
        record = sample("order status", "a", 0)
        del record[key]
        with pytest.raises(InvalidArgument, match=f'has no "{key}"'):
            w.write_sample(record)
        w.close(None)
    assert read_results(tmp_path / "r.jsonl").samples == ()


def test_writer_refuses_unknown_statuses(tmp_path: Path) -> None:
    with ResultsWriter.create(tmp_path / "r.jsonl", manifest()) as w:
        with pytest.raises(InvalidArgument, match="did you mean 'completed'"):
            w.write_sample(sample("order status", "a", 0, "complete"))
        with pytest.raises(InvalidArgument, match=r"checks\[0\].*did you mean 'passed'"):
            w.write_sample(sample("order status", "a", 0, "completed", "pass"))
        with pytest.raises(InvalidArgument, match="repeat"):
            w.write_sample(sample("order status", "a", -1))


def test_writer_after_close(tmp_path: Path) -> None:
    w = ResultsWriter.create(tmp_path / "r.jsonl", manifest())
    w.close({"status": "finished"})
    assert w.closed
    with pytest.raises(ResultsFileError, match="already closed"):
        w.write_sample(sample("order status", "a", 0))
    with pytest.raises(ResultsFileError, match="already closed"):
        w.close({"status": "finished"})


def test_context_manager_exception_closes_without_summary(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with pytest.raises(RuntimeError), ResultsWriter.create(path, manifest()) as w:
        w.write_sample(sample("order status", "a", 0))
        raise RuntimeError("boom")
    assert w.closed
    results = read_results(path)
    assert len(results.samples) == 1
    assert results.summary is None
    assert results.warnings == (NO_SUMMARY_WARNING,)


def test_interrupted_summary_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    write_run(path, all_samples(1)[:2], summary={"status": "interrupted", "reason": "SIGINT"})
    results = read_results(path)
    assert results.summary is not None and results.summary["status"] == "interrupted"
    assert results.warnings == ("the run ended with status 'interrupted': SIGINT",)


# --- exclusive creation and the file mode --------------------------------------


def test_existing_path_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_bytes(b"precious data\n")
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    before = path.stat()
    with pytest.raises(ResultsFileError, match="results.jsonl already exists"):
        ResultsWriter.create(path, manifest())
    after = path.stat()
    assert path.read_bytes() == b"precious data\n"
    assert after.st_mtime_ns == before.st_mtime_ns == 1_000_000_000
    assert after.st_size == before.st_size
    assert stat.S_IMODE(after.st_mode) == stat.S_IMODE(before.st_mode)


def test_existing_results_file_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    write_run(path, all_samples(1))
    raw = path.read_bytes()
    with pytest.raises(ResultsFileError, match="already exists"):
        ResultsWriter.create(path, manifest())
    assert path.read_bytes() == raw


def test_dangling_symlink_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.jsonl"
    link = tmp_path / "results.jsonl"
    link.symlink_to(target)
    with pytest.raises(ResultsFileError, match="already exists"):
        ResultsWriter.create(link, manifest())
    assert not target.exists()


def test_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "results.jsonl"
    with pytest.raises(ResultsFileError, match="the folder .*such does not exist"):
        ResultsWriter.create(path, manifest())


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077, 0o277])
def test_mode_is_0600_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        path = tmp_path / f"r{umask:o}.jsonl"
        with ResultsWriter.create(path, manifest()) as w:
            w.write_sample(sample("order status", "a", 0))
            w.close({"status": "finished"})
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(read_results(path).samples) == 1


# --- the secret guard -------------------------------------------------------------


CANARY = "sk-canary-3f9a1c0e7d5b"


@pytest.mark.parametrize(
    "name",
    [
        "EVALSTATS_CANARY_API_KEY",
        "GH_TOKEN",
        "my_secret",
        "AWS_SECRET_ACCESS_KEY",
        "DB_PASSWORD",
        "PGPASSWORD",
        "MYSQL_PWD",
        "SMTP_PASS",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "SIGNING_KEY",
        "npm_config__auth",
    ],
)
def test_secret_guard_refuses_a_sample_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv(name, CANARY)
    path = tmp_path / "r.jsonl"
    w = ResultsWriter.create(path, manifest())
    size = path.stat().st_size
    record = sample("order status", "a", 0)
    record["answer"] = f"here is the key: {CANARY}!"
    with pytest.raises(ResultsFileError, match=rf"credential \(the value of \${name}\)"):
        w.write_sample(record)
    assert path.stat().st_size == size
    with pytest.raises(ResultsFileError, match="credential"):
        w.close({"status": "finished", "reason": CANARY})
    assert CANARY.encode() not in path.read_bytes()
    assert read_results(path).summary is None


def test_secret_guard_sees_json_escaped_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = 'abc"def\\ghi\tjkl'
    monkeypatch.setenv("EVALSTATS_CANARY_API_KEY", secret)
    with ResultsWriter.create(tmp_path / "r.jsonl", manifest()) as w:
        record = sample("order status", "a", 0)
        record["trace"] = {"headers": {"authorization": secret}}
        with pytest.raises(ResultsFileError, match="EVALSTATS_CANARY_API_KEY"):
            w.write_sample(record)
        w.close({"status": "finished"})
    raw = (tmp_path / "r.jsonl").read_bytes()
    assert secret.encode() not in raw and json.dumps(secret)[1:-1].encode() not in raw


def test_secret_in_the_manifest_creates_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALSTATS_CANARY_API_KEY", CANARY)
    m = manifest()
    m["variants"][0]["task"]["api_key"] = CANARY
    with pytest.raises(ResultsFileError, match="EVALSTATS_CANARY_API_KEY"):
        ResultsWriter.create(tmp_path / "r.jsonl", m)
    assert not (tmp_path / "r.jsonl").exists()


@pytest.mark.parametrize(
    "url", [f"postgres://app:{CANARY}@db:5432/app", f"redis://:{CANARY}@cache:6379/0"]
)
def test_the_password_of_a_url_variable_is_a_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.setenv("DATABASE_URL", url)
    with ResultsWriter.create(tmp_path / "r.jsonl", manifest()) as w:
        record = sample("order status", "a", 0)
        record["answer"] = f"connected with {CANARY}"
        with pytest.raises(ResultsFileError, match=r"the value of \$DATABASE_URL"):
            w.write_sample(record)
        record["answer"] = "db:5432 and the user app are no secret"
        w.write_sample(record)
        w.close({"status": "finished"})
    assert CANARY.encode() not in (tmp_path / "r.jsonl").read_bytes()


def test_short_or_unrelated_values_are_not_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHORT_TOKEN", "passed")  # shorter than 8: would match everything
    monkeypatch.setenv("EVALSTATS_CANARY_NAME", CANARY)  # not a secret suffix
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", CANARY + "-id")  # names a key, is none
    monkeypatch.setenv("SERVICE_URL", f"https://{CANARY}.example/")  # a URL without password
    path = tmp_path / "r.jsonl"
    with ResultsWriter.create(path, manifest()) as w:
        record = sample("order status", "a", 0)
        record["answer"] = CANARY
        w.write_sample(record)
        w.close({"status": "finished"})
    assert read_results(path).samples[0]["answer"] == CANARY


# --- the counting rule -----------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "checks", "expected"),
    [
        ("unmeasured", [], None),
        ("unmeasured", ["passed"], None),
        ("incomplete", [], False),
        ("incomplete", ["passed"], False),
        ("incomplete", ["failed", "failed"], False),
        ("completed", [], False),
        ("completed", ["unscored"], False),
        ("completed", ["unscored", "unscored"], False),
        ("completed", ["passed", "failed"], False),
        ("completed", ["failed", "unscored"], False),
        ("completed", ["passed"], True),
        ("completed", ["passed", "unscored", "passed"], True),
    ],
)
def test_sample_passed_rules(status: str, checks: list[str], expected: bool | None) -> None:
    record = {"status": status, "checks": [{"check": "c", "status": s} for s in checks]}
    assert sample_passed(record) is expected


@given(st.lists(st.sampled_from(["passed", "failed", "unscored"]), max_size=6))
def test_sample_passed_matches_its_definition(checks: list[str]) -> None:
    record = {"status": "completed", "checks": [{"status": s} for s in checks]}
    scored = [s for s in checks if s != "unscored"]
    assert sample_passed(record) is (bool(scored) and all(s == "passed" for s in scored))
    # adding an unscored check never changes the outcome
    record["checks"].append({"status": "unscored"})
    assert sample_passed(record) is (bool(scored) and all(s == "passed" for s in scored))


def test_sample_passed_rejects_bad_records() -> None:
    with pytest.raises(InvalidArgument, match="did you mean 'incomplete'"):
        sample_passed({"status": "incompelte", "checks": []})
    with pytest.raises(InvalidArgument, match="checks=None"):
        sample_passed({"status": "completed"})
    with pytest.raises(InvalidArgument, match=r"checks\[1\] status='fail'"):
        sample_passed({"status": "completed", "checks": [{"status": "passed"}, {"status": "fail"}]})
    with pytest.raises(InvalidArgument, match="must be a sample record"):
        sample_passed(["completed"])  # type: ignore[arg-type]


# --- outcomes --------------------------------------------------------------------


def test_outcomes_shape_with_none_for_unmeasured_and_missing(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    samples = [
        sample("refund request", "a", 0, "completed", "passed"),
        sample("refund request", "a", 1, "completed", "failed"),
        sample("order status", "a", 1, "incomplete", "failed"),
        sample("order status", "a", 0, "unmeasured"),
        sample("refund request", "b", 0, "completed", "unscored"),
    ]
    write_run(path, samples, summary={"status": "interrupted"})
    results = read_results(path)
    assert results.outcomes("a") == {
        "refund request": [True, False],
        "order status": [None, False],
        "rude customer": [None, None],
    }
    assert results.outcomes("b") == {
        "refund request": [False, None],
        "order status": [None, None],
        "rude customer": [None, None],
    }
    with pytest.raises(InvalidArgument, match="variant='c' is not in this run"):
        results.outcomes("c")


def test_outcomes_without_schedule_use_cases_and_runs(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    m = {
        "variants": [{"name": "only"}],
        "runs": 3,
        "cases": [{"id": "x"}, {"id": "kept aside", "holdout": True}, {"id": "y"}],
    }
    with ResultsWriter.create(path, m) as w:
        w.write_sample(sample("y", "only", 2, "completed", "passed"))
        w.write_sample(sample("extra", "only", 0, "completed", "failed"))
        w.close({"status": "finished"})
    assert read_results(path).outcomes("only") == {
        "x": [None, None, None],
        "y": [None, None, True],
        "extra": [False],
    }


def test_variants_from_samples_when_manifest_has_none(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with ResultsWriter.create(path, {}) as w:
        w.write_sample(sample("x", "second", 0))
        w.write_sample(sample("x", "first", 0))
        w.write_sample(sample("y", "second", 0))
        w.close({"status": "finished"})
    results = read_results(path)
    assert results.variants() == ("second", "first")
    assert results.outcomes("second") == {"x": [True], "y": [True]}


def test_duplicate_sample_warns_and_the_first_counts(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    write_run(
        path,
        [
            sample("order status", "a", 0, "completed", "failed"),
            sample("order status", "a", 0, "completed", "passed"),
        ],
    )
    results = read_results(path)
    assert len(results.samples) == 2
    assert results.warnings == (
        "line 3: a second sample for case 'order status', variant 'a', repeat 0 "
        "(the first is on line 2 and is the one counted)",
    )
    assert results.outcomes("a")["order status"][0] is False


# --- a strict reader ---------------------------------------------------------------


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def test_garbled_line_in_the_middle_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    write_run(path, all_samples(1))
    lines = lines_of(path)
    lines[3] = lines[3][:20] + b"\n"
    path.write_bytes(b"".join(lines))
    with pytest.raises(ResultsFileError, match=r"r\.jsonl: line 4 is not valid JSON"):
        read_results(path)


def test_invalid_utf8_in_the_middle_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    write_run(path, all_samples(1))
    lines = lines_of(path)
    lines[2] = lines[2].replace(b"\xc3\xa9", b"\xff")
    path.write_bytes(b"".join(lines))
    with pytest.raises(ResultsFileError, match="line 3 is not valid JSON"):
        read_results(path)


def test_first_line_must_be_a_manifest(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"type":"sample","case":"x"}\n')
    with pytest.raises(ResultsFileError, match="line 1 should be the manifest.*'sample'"):
        read_results(path)
    path.write_text('{"a": 1}\n')
    with pytest.raises(ResultsFileError, match="line 1 should be the manifest"):
        read_results(path)
    path.write_text("[1, 2]\n")
    with pytest.raises(ResultsFileError, match="line 1 is not a JSON object"):
        read_results(path)


def test_unknown_format_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"type":"manifest","format":2}\n')
    with pytest.raises(ResultsFileError, match="format=2; this evalstats reads format 1"):
        read_results(path)
    path.write_text('{"type":"manifest"}\n')
    with pytest.raises(ResultsFileError, match="format=None"):
        read_results(path)


@pytest.mark.parametrize("key", ["case", "variant", "repeat", "status", "checks"])
def test_sample_missing_a_key_names_key_and_line(tmp_path: Path, key: str) -> None:
    path = tmp_path / "r.jsonl"
    write_run(path, all_samples(1))
    lines = lines_of(path)
    record = json.loads(lines[4])
    del record[key]
    lines[4] = json.dumps(record).encode() + b"\n"
    path.write_bytes(b"".join(lines))
    with pytest.raises(ResultsFileError, match=f'line 5: the sample has no "{key}"'):
        read_results(path)


def test_records_after_the_summary_are_an_error(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    write_run(path, all_samples(1))
    with open(path, "ab") as f:
        f.write(b'{"type":"sample"}\n')
    with pytest.raises(ResultsFileError, match="line 9: a 'sample' record after the summary"):
        read_results(path)


def test_unknown_record_type_and_second_manifest(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    write_run(path, [], summary={})
    lines = lines_of(path)
    path.write_bytes(lines[0] + b'{"type":"sampel"}\n' + lines[1])
    with pytest.raises(ResultsFileError, match="line 2: unknown record type 'sampel'.*'sample'"):
        read_results(path)
    path.write_bytes(lines[0] + lines[0] + lines[1])
    with pytest.raises(ResultsFileError, match="line 2: a second manifest"):
        read_results(path)


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(ResultsFileError, match="no such results file"):
        read_results(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_bytes(b"")
    with pytest.raises(ResultsFileError, match="the file is empty"):
        read_results(tmp_path / "empty.jsonl")
    with pytest.raises(ResultsFileError, match="is a folder"):
        read_results(tmp_path)


def test_trailing_summary_without_newline_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    write_run(path, all_samples(1))
    raw = path.read_bytes()
    path.write_bytes(raw[:-1])  # the summary lost only its newline: a complete record
    results = read_results(path)
    assert results.summary is not None and results.warnings == ()
    path.write_bytes(raw + b"\n  \n")
    assert read_results(path).warnings == ()


# --- kill -9 at any moment leaves a valid prefix -------------------------------------


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, list[dict]]:
    path = tmp_path_factory.mktemp("run") / "results.jsonl"
    samples = all_samples(1)[:4]
    write_run(path, samples)
    return path.read_bytes(), samples


@pytest.mark.slow
def test_every_truncation_reads_as_a_prefix(
    small_run: tuple[bytes, list[dict]], tmp_path: Path
) -> None:
    raw, samples = small_run
    ends = [i + 1 for i, b in enumerate(raw) if b == ord("\n")]  # offsets after each line
    manifest_end = ends[0]
    path = tmp_path / "cut.jsonl"
    for cut in range(len(raw) + 1):
        path.write_bytes(raw[:cut])
        if cut < manifest_end - 1:  # the manifest itself is cut (its newline alone may go)
            with pytest.raises(ResultsFileError, match="empty|manifest .*incomplete"):
                read_results(path)
            continue
        results = read_results(path)
        # the complete lines (a record that lost only its newline is complete)
        complete = sum(1 for e in ends[1:-1] if cut >= e - 1)
        assert [strip(s) for s in results.samples] == samples[:complete], cut
        at_boundary = cut in ends or cut in (e - 1 for e in ends) or cut == len(raw)
        if cut >= len(raw) - 1:
            assert results.summary is not None and results.warnings == ()
            continue
        assert results.summary is None
        expected = [NO_SUMMARY_WARNING] if at_boundary else [TRUNCATED_WARNING, NO_SUMMARY_WARNING]
        assert list(results.warnings) == expected, cut


def resume_and_finish(path: Path, samples: list[dict]) -> Results:
    writer, so_far = ResultsWriter.resume(path)
    done = {(s["case"], s["variant"], s["repeat"]) for s in so_far.samples}
    with writer:
        for s in samples:
            if (s["case"], s["variant"], s["repeat"]) not in done:
                writer.write_sample(s)
        writer.close({"status": "finished"})
    return so_far


@settings(max_examples=60)
@given(data=st.data())
def test_resume_after_truncation_loses_and_duplicates_nothing(
    small_run: tuple[bytes, list[dict]],
    tmp_path_factory: pytest.TempPathFactory,
    data: st.DataObject,
) -> None:
    raw, samples = small_run
    manifest_end = raw.index(b"\n") + 1
    cut = data.draw(st.integers(manifest_end, len(raw)), label="cut")
    path = tmp_path_factory.mktemp("resume") / "results.jsonl"
    path.write_bytes(raw[:cut])
    os.chmod(path, 0o600)
    so_far = resume_and_finish(path, samples)
    assert so_far.summary is None
    final = read_results(path)
    assert final.warnings == ()
    assert final.manifest == json.loads(raw[:manifest_end])
    keys = [(s["case"], s["variant"], s["repeat"]) for s in final.samples]
    assert len(keys) == len(set(keys)) == len(samples)
    assert sorted(map(json.dumps, map(strip, final.samples))) == sorted(map(json.dumps, samples))
    # what was there before is kept, byte for byte, in front of what was added
    kept = raw[: raw.rindex(b"\n", 0, cut) + 1] if b"\n" in raw[:cut] else b""
    if cut >= len(raw) - 1:
        kept = raw[: raw.rindex(b"\n", 0, raw.rindex(b"\n")) + 1]  # summary removed
    assert path.read_bytes().startswith(kept)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_resume_reports_what_it_dropped(
    small_run: tuple[bytes, list[dict]], tmp_path: Path
) -> None:
    raw, samples = small_run
    path = tmp_path / "r.jsonl"
    last_sample_start = raw.rindex(b"\n", 0, raw.rindex(b"\n", 0, len(raw) - 1)) + 1
    path.write_bytes(raw[: last_sample_start + 30])  # cut inside the last sample
    writer, so_far = ResultsWriter.resume(path)
    writer.close(None)
    assert so_far.warnings == (TRUNCATED_WARNING,)
    assert len(so_far.samples) == len(samples) - 1

    path.write_bytes(raw)
    writer, so_far = ResultsWriter.resume(path)
    writer.close(None)
    assert so_far.warnings == (
        "removed the summary (status 'finished') of the earlier session to append to the run",
    )
    assert read_results(path).summary is None
    assert len(read_results(path).samples) == len(samples)


def test_resume_of_a_complete_last_line_without_newline(
    small_run: tuple[bytes, list[dict]], tmp_path: Path
) -> None:
    raw, samples = small_run
    path = tmp_path / "r.jsonl"
    body = raw[: raw.rindex(b"\n", 0, len(raw) - 1)]  # up to the last sample, no newline
    path.write_bytes(body)
    resume_and_finish(path, samples + [sample("rude customer", "a", 0)])
    final = read_results(path)
    assert len(final.samples) == len(samples) + 1 and final.warnings == ()


def test_resume_errors(tmp_path: Path) -> None:
    with pytest.raises(ResultsFileError, match="no such results file"):
        ResultsWriter.resume(tmp_path / "nope.jsonl")
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"type":"manif')
    with pytest.raises(ResultsFileError, match="manifest .*incomplete"):
        ResultsWriter.resume(path)
    assert path.read_bytes() == b'{"type":"manif'


WRITER_SCRIPT = textwrap.dedent(
    """
    import sys
    from evalstats.results._file import ResultsWriter
    path = sys.argv[1]
    answer = "x" * 3000  # long lines make a kill in the middle of a write more likely
    # As many runs as a results file may hold (MAX_RUNS): the writer is killed long before.
    with ResultsWriter.create(path, {"variants": [{"name": "a"}], "runs": 10**6}) as w:
        for r in range(10**6):
            w.write_sample({"case": "c", "variant": "a", "repeat": r, "status": "completed",
                            "answer": answer, "checks": [{"status": "passed"}]})
    """
)


def test_sigkill_mid_run_leaves_a_readable_prefix(tmp_path: Path) -> None:
    path = tmp_path / "killed.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", WRITER_SCRIPT, str(path)])
    try:
        deadline = time.monotonic() + 60  # only a stuck child gets near this
        while time.monotonic() < deadline:
            if path.exists() and path.stat().st_size > 200_000:
                break
            if proc.poll() is not None:
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the writer exited by itself"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    results = read_results(path)
    assert results.summary is None
    assert NO_SUMMARY_WARNING in results.warnings
    n = len(results.samples)
    assert n >= 200_000 // 3200 - 1
    assert [s["repeat"] for s in results.samples] == list(range(n))
    resume_and_finish(path, [])
    assert len(read_results(path).samples) == n


# --- the machine ---------------------------------------------------------------------


def test_machine_fingerprint_and_environment() -> None:
    fp = machine_fingerprint()
    assert len(fp) == 16 and int(fp, 16) >= 0 and fp == machine_fingerprint()
    env = environment()
    assert set(env) == {"python", "os", "arch", "machine"}
    assert env["machine"] == fp
    assert env["python"] == "{}.{}.{}".format(*sys.version_info[:3])


def test_fingerprint_depends_on_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    import platform

    fp = machine_fingerprint()
    monkeypatch.setattr(platform, "node", lambda: "another-host")
    assert machine_fingerprint() != fp


@st.composite
def sample_records(draw: st.DrawFn) -> dict:
    """A sample record as the engine writes it (case, variant, repeat, status, checks)."""
    status = draw(st.sampled_from(["completed", "incomplete", "unmeasured"]))
    checks = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "check": st.sampled_from(["contains('A-1042')", "word_count(3, 60)"]),
                    "axis": st.none() | st.sampled_from(["answer", "format"]),
                    "status": st.sampled_from(["passed", "failed", "unscored"]),
                    "reason": st.text(max_size=20),
                }
            ),
            max_size=3,
        )
    )
    return {
        "case": draw(st.sampled_from(["refund request", "order status", "ünïcode ✓"])),
        "variant": draw(st.sampled_from(["a", "b"])),
        "repeat": draw(st.integers(0, 3)),
        "status": status,
        "reason": None if status == "completed" else draw(st.text(max_size=20)),
        "answer": None if status == "unmeasured" else draw(st.text(max_size=40)),
        "checks": checks,
        "latency_s": draw(st.floats(0, 100, allow_nan=False)),
    }


# --- property: whatever is written reads back ---------------------------------------


@settings(max_examples=40)
@given(records=st.lists(sample_records(), max_size=8))
def test_written_records_read_back_exactly(
    records: list[dict], tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("prop") / "r.jsonl"
    with ResultsWriter.create(path, {"variants": [{"name": "a"}, {"name": "b"}]}) as w:
        for r in records:
            w.write_sample(r)
        w.close({"status": "finished"})
    results = read_results(path)
    assert [strip(s) for s in results.samples] == records
    for v in ("a", "b"):
        outcomes = results.outcomes(v)
        for r in records:
            if r["variant"] == v:
                first = next(
                    x
                    for x in records
                    if (x["case"], x["variant"], x["repeat"]) == (r["case"], v, r["repeat"])
                )
                assert outcomes[r["case"]][r["repeat"]] is sample_passed(first)


# --- durability: fsync at most once an interval, and at least once after writing ----


def test_fsync_runs_at_most_once_an_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evalstats.results._file as results_module

    calls: list[float] = []
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        calls.append(time.monotonic())
        real_fsync(fd)

    monkeypatch.setattr(results_module.os, "fsync", counting_fsync)
    start = time.monotonic()
    with ResultsWriter.create(tmp_path / "r.jsonl", manifest()) as w:
        after_create = len(calls)
        for r in range(3000):
            w.write_sample(sample("order status", "a", r))
        during = len(calls) - after_create
        elapsed = time.monotonic() - start
        w.close({"status": "finished"})
    # one per started second of writing at most (however slow this machine is) ...
    assert during <= elapsed / results_module.SYNC_INTERVAL_S + 1
    # ... and the close syncs what is left
    assert len(calls) > after_create + during
    assert len(read_results(tmp_path / "r.jsonl").samples) == 3000


def test_unsynced_data_is_synced_without_further_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    import evalstats.results._file as results_module

    synced = threading.Event()
    real_fsync = os.fsync

    def watching_fsync(fd: int) -> None:
        real_fsync(fd)
        synced.set()

    monkeypatch.setattr(results_module, "SYNC_INTERVAL_S", 0.02)
    w = ResultsWriter.create(tmp_path / "r.jsonl", manifest())
    monkeypatch.setattr(results_module.os, "fsync", watching_fsync)
    try:
        w.write_sample(sample("order status", "a", 0))
        # the background thread syncs on its own; only a broken one waits this long
        assert synced.wait(timeout=30)
    finally:
        w.close(None)


def test_a_run_being_written_cannot_be_resumed(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    w = ResultsWriter.create(path, manifest())
    w.write_sample(sample("order status", "a", 0))
    raw = path.read_bytes()
    with pytest.raises(ResultsFileError, match="being written by another evalstats run"):
        ResultsWriter.resume(path)
    assert path.read_bytes() == raw
    w.close(None)
    writer, so_far = ResultsWriter.resume(path)  # free once the first writer closed
    assert len(so_far.samples) == 1
    assert writer.samples_written == 0
    writer.close({"status": "finished"})


def test_read_only_mappings_are_written_as_objects(tmp_path: Path) -> None:
    from types import MappingProxyType

    path = tmp_path / "r.jsonl"
    record = sample("order status", "a", 0)
    record["prompt"] = {
        "system": None,
        "messages": (MappingProxyType({"role": "user", "content": "hi"}),),
    }
    with ResultsWriter.create(path, manifest()) as w:
        w.write_sample(record)
        w.write_sample({**record, "answer": "\ud800"})  # a lone surrogate is not UTF-8
        w.close({"status": "finished"})
    written, escaped = read_results(path).samples
    assert written["prompt"] == {"system": None, "messages": [{"role": "user", "content": "hi"}]}
    assert escaped["prompt"] == written["prompt"]
    assert escaped["answer"] == "\\ud800" and len(escaped["recording_notes"]) == 1


def test_secret_guard_without_the_fast_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an environment mapping without CPython's encoded store takes the public way
    monkeypatch.setattr(os, "environ", {"PATH": "/bin", "Evalstats_Canary_Api_Key": CANARY})
    with ResultsWriter.create(tmp_path / "r.jsonl", manifest()) as w:
        record = sample("order status", "a", 0)
        record["answer"] = CANARY
        with pytest.raises(ResultsFileError, match=r"\$Evalstats_Canary_Api_Key"):
            w.write_sample(record)
        w.close(None)
    assert CANARY.encode() not in (tmp_path / "r.jsonl").read_bytes()


@settings(max_examples=60)
@given(records=st.lists(sample_records(), min_size=1, max_size=6), data=st.data())
def test_any_cut_of_any_run_reads_as_a_prefix(
    records: list[dict], data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("cut") / "r.jsonl"
    with ResultsWriter.create(path, {"variants": [{"name": "a"}, {"name": "b"}]}) as w:
        for r in records:
            w.write_sample(r)
        w.close({"status": "finished"})
    raw = path.read_bytes()
    manifest_end = raw.index(b"\n")  # the manifest is complete from here on
    cut = data.draw(st.integers(manifest_end, len(raw)), label="cut")
    path.write_bytes(raw[:cut])
    results = read_results(path)
    got = [strip(s) for s in results.samples]
    assert got == records[: len(got)]
    # every sample whose line (bar its newline) is within the cut is kept
    line_ends = [i for i, b in enumerate(raw) if b == ord("\n")][1:-1]
    assert len(got) == sum(1 for end in line_ends if end <= cut)
    if results.summary is None:
        assert NO_SUMMARY_WARNING in results.warnings


def test_reading_leaves_the_garbage_collector_as_it_was(tmp_path: Path) -> None:
    import gc

    path = tmp_path / "r.jsonl"
    write_run(path, all_samples(1))
    assert gc.isenabled()
    read_results(path)
    assert gc.isenabled()
    gc.disable()
    try:
        read_results(path)
        assert not gc.isenabled()
    finally:
        gc.enable()
    path.write_bytes(b"garbage\n")
    with pytest.raises(ResultsFileError):
        read_results(path)
    assert gc.isenabled()


WRITE_AND_EXIT = textwrap.dedent(
    """
    import os, sys
    import evalstats.results._file as results
    log = open(sys.argv[2], "w", buffering=1)
    real = os.fsync
    def fsync(fd):
        real(fd)
        log.write("fsync\\n")
    results.os.fsync = fsync
    w = results.ResultsWriter.create(sys.argv[1], {})
    w.write_sample({"case": "c", "variant": "a", "repeat": 0, "status": "completed",
                    "checks": []})
    log.write("written\\n")
    # the script ends without closing the writer
    """
)


def test_a_writer_left_open_is_synced_at_exit(tmp_path: Path) -> None:
    path, log = tmp_path / "r.jsonl", tmp_path / "log"
    subprocess.run([sys.executable, "-c", WRITE_AND_EXIT, str(path), str(log)], check=True)
    events = log.read_text().split()
    assert "fsync" in events[events.index("written") :]  # synced on the way out
    results = read_results(path)
    assert len(results.samples) == 1 and results.summary is None
