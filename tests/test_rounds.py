"""The report of a run made with --until-decided: the wall time of each round."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalstats.cli import main
from evalstats.demo._server import serve
from evalstats.presenting._rounds import round_lines, round_times
from evalstats.results._file import read_results

SHOP = ["--variant", "v1=standin:shop-v1", "--variant", "v2=standin:shop-v2"]


def _look(round_: int, start: str | None, at: str | None, **extra) -> dict:
    look = {"round": round_, "pairs": 4 * round_, "verdict": "cant_tell", **extra}
    if start is not None:
        look["started_at"] = start
    if at is not None:
        look["at"] = at
    return look


def test_a_rounds_wall_time_runs_from_its_start_to_its_look() -> None:
    looks = [
        _look(1, "2026-01-01T10:00:00.000+00:00", "2026-01-01T10:00:04.500+00:00"),
        _look(2, "2026-01-01T10:00:04.600+00:00", "2026-01-01T10:03:16.600+00:00", batches=2),
        _look(3, "2026-01-01T11:00:00+00:00", "2026-01-01T13:05:00+00:00", verdict="b_better"),
    ]
    rounds = round_times(looks)
    assert [r.wall_s for r in rounds] == pytest.approx([4.5, 192.0, 7500.0])
    assert [r.batches for r in rounds] == [None, 2, None]
    text = "\n".join(round_lines(rounds))
    assert "rounds (run --until-decided): 3, wall time 2 h 08 min in all"  # 7696.5 s in text
    assert "median 3 min 12 s a round" in text
    assert "      2        8    3 min 12 s        2  can't tell yet" in text
    assert "      3       12    2 h 05 min        -  B better" in text


def test_looks_without_times_give_no_rounds() -> None:
    # files written before look records had times report as before
    assert round_times([_look(1, None, None), _look(2, None, None)]) == ()
    assert round_lines(()) == []
    mixed = round_times([_look(1, None, None), _look(2, "2026-01-01T10:00:00+00:00",
                                                     "2026-01-01T10:00:02+00:00")])  # fmt: skip
    assert [r.wall_s for r in mixed] == [None, 2.0]
    assert "(1 without a recorded time)" in round_lines(mixed)[1]


def test_the_report_of_a_sequential_run_shows_each_rounds_wall_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.jsonl"
    argv = ["run", "shop", *SHOP, "--until-decided", "--max-runs", "6", "--out", str(out)]
    assert main([*argv, "--no-progress"]) == 0
    capsys.readouterr()
    looks = read_results(out).looks
    assert main(["report", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"rounds (run --until-decided): {len(looks)}, wall time " in text
    assert "  round    pairs     wall time  verdict" in text
    assert main(["report", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["round"] for r in doc["rounds"]] == [look["round"] for look in looks]
    assert all(r["wall_s"] >= 0 for r in doc["rounds"])


def test_a_sequential_file_without_look_times_reports_as_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.jsonl"
    argv = ["run", "shop", *SHOP, "--until-decided", "--max-runs", "3", "--out", str(out)]
    assert main([*argv, "--no-progress"]) == 0
    old = tmp_path / "old.jsonl"
    lines = []
    for line in out.read_text().splitlines():
        record = json.loads(line)
        if record["type"] == "look":
            record.pop("started_at")
            record.pop("at")
        lines.append(json.dumps(record))
    old.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["report", str(old), "--json"]) == 0
    assert "rounds" not in json.loads(capsys.readouterr().out)
    assert main(["report", str(old)]) == 0
    assert "rounds (run --until-decided)" not in capsys.readouterr().out


def test_a_batch_round_records_its_batches(tmp_path: Path, capsys) -> None:
    out = tmp_path / "seq.jsonl"
    with serve(batch_delay_s=0.02) as server:
        url = server.base_url + "/v1"
        v1, v2 = f"v1=openai:shop-v1,base_url={url}", f"v2=openai:shop-v2,base_url={url}"
        argv = ["run", "shop", "--variant", v1, "--variant", v2, "--until-decided",
                "--max-runs", "3", "--batch", "--batch-poll-s", "0.02", "--out", str(out),
                "--no-progress"]  # fmt: skip
        assert main(argv) == 0
    looks = read_results(out).looks
    assert [look["batches"] for look in looks] == [2] * len(looks)  # one per variant a round
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    text = capsys.readouterr().out
    assert "  round    pairs     wall time  batches  verdict" in text
