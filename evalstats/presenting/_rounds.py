"""The rounds of a run made with ``run --until-decided``: wall time per round.

Each look record of a sequential run says when its round started in the
session that ran it (``started_at``) and when the look was taken (``at``);
with ``--batch`` also how many batches the round sent (``batches``). A
round's wall time is the time between the two: under ``--batch`` it is
mostly the provider's turnaround. A round resumed after an interruption
counts only the session that finished it. Files written before look records
had times report as before, without the rounds.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

__all__ = ["RoundTime", "round_lines", "round_times"]


@dataclass(frozen=True)
class RoundTime:
    """One round of a sequential run: its look, and how long it took.

    ``wall_s`` is None when the look record has no times (older files);
    ``batches`` None when the round sent none (or the file does not say).
    """

    round: int
    pairs: int
    verdict: str
    wall_s: float | None
    batches: int | None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _time(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def round_times(looks: Sequence[Mapping[str, Any]]) -> tuple[RoundTime, ...]:
    """Every look record's round, pairs, verdict, wall time and batches, in file order;
    none when no look records a time (files written before looks had times).

    Examples
    --------
    >>> looks = [{"round": 1, "pairs": 4, "verdict": "cant_tell",
    ...           "started_at": "2026-01-01T10:00:00+00:00", "at": "2026-01-01T10:30:05+00:00",
    ...           "batches": 2}]
    >>> round_times(looks)[0].wall_s
    1805.0
    """
    out = []
    for i, look in enumerate(looks):
        start, end = _time(look.get("started_at")), _time(look.get("at"))
        wall = None
        if start is not None and end is not None:
            try:
                wall = max(0.0, (end - start).total_seconds())
            except TypeError:  # one of them without a time zone
                wall = None
        rnd, pairs, batches = look.get("round"), look.get("pairs"), look.get("batches")
        out.append(
            RoundTime(
                round=rnd if isinstance(rnd, int) and not isinstance(rnd, bool) else i + 1,
                pairs=pairs if isinstance(pairs, int) and not isinstance(pairs, bool) else 0,
                verdict=str(look.get("verdict")),
                wall_s=wall,
                batches=batches if isinstance(batches, int) and batches > 0 else None,
            )
        )
    return tuple(out) if any(r.wall_s is not None for r in out) else ()


def _duration(seconds: float) -> str:
    """A wall time as a person writes it: 4.2 s, 3 min 12 s, 2 h 05 min."""
    if seconds < 60:
        return f"{seconds:.3g} s"
    minutes = math.floor(seconds / 60)
    if minutes < 60:
        return f"{minutes} min {round(seconds - 60 * minutes):02d} s"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes:02d} min"


_VERDICTS = {"b_better": "B better", "a_better": "A better", "cant_tell": "can't tell yet"}


def round_lines(rounds: Sequence[RoundTime], *, limit: int = 12) -> list[str]:
    """The report's lines on a sequential run's rounds (none for other runs): the
    rounds and their total wall time, then a table of the rounds (the first and
    last ``limit // 2`` when there are more than ``limit``)."""
    if not rounds:
        return []
    known = [r.wall_s for r in rounds if r.wall_s is not None]
    batched = any(r.batches is not None for r in rounds)
    head = f"rounds (run --until-decided): {len(rounds)}"
    if known:
        head += f", wall time {_duration(sum(known))} in all"
        if len(known) < len(rounds):
            head += f" ({len(rounds) - len(known)} without a recorded time)"
        head += f", median {_duration(statistics.median(known))} a round"
    lines = ["", head]
    cols = f"  {'round':>5}  {'pairs':>7}  {'wall time':>12}"
    lines.append(cols + (f"  {'batches':>7}" if batched else "") + "  verdict")
    keep = set(range(len(rounds)))
    if len(rounds) > limit:
        keep = set(range(limit // 2)) | set(range(len(rounds) - limit // 2, len(rounds)))
    gap = False
    for i, r in enumerate(rounds):
        if i not in keep:
            if not gap:
                lines.append(f"  {'...':>5}")
            gap = True
            continue
        gap = False
        wall = "-" if r.wall_s is None else _duration(r.wall_s)
        row = f"  {r.round:>5}  {r.pairs:>7}  {wall:>12}"
        if batched:
            row += f"  {'-' if r.batches is None else r.batches:>7}"
        lines.append(row + f"  {_VERDICTS.get(r.verdict, r.verdict)}")
    return lines
