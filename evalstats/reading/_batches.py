"""The batches a ``run --batch`` sent to its providers, read from its results file."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._terminal import visible
from ..results._file import read_results

__all__ = ["BatchRow", "RunBatches", "run_batches"]


@dataclass(frozen=True)
class BatchRow:
    """One batch: its id, provider, variant, requests, state and what it answered.

    ``state`` is ``submitted`` (not yet seen to end: ``--resume`` polls it),
    ``ended``, ``cancelled``, or ``not submitted`` (the run stopped between
    writing the requests down and the provider's reply; ``--resume`` looks for
    it by its key where the API can, and otherwise sends the requests again).
    """

    id: str
    provider: str
    variant: str
    requests: int
    state: str
    status: str | None
    answered: int | None
    unanswered: int | None
    submitted_at: str | None
    ended_at: str | None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class RunBatches:
    """The batches of one results file, in the order they were submitted."""

    path: str
    rows: tuple[BatchRow, ...]

    def __str__(self) -> str:
        waiting = sum(r.state == "submitted" for r in self.rows)
        name = os.path.basename(self.path)
        if not self.rows:
            return f"{name}: no batches (the run did not use --batch)"
        lines = [
            f"{name}: {len(self.rows)} batches, {waiting} not seen to end"
            + ("; --resume polls them" if waiting else "")
        ]
        head = ("batch", "provider", "variant", "requests", "state", "answered", "unanswered")
        table = [head] + [
            (
                r.id,
                r.provider,
                r.variant,
                str(r.requests),
                r.state,
                "-" if r.answered is None else str(r.answered),
                "-" if r.unanswered is None else str(r.unanswered),
            )
            for r in self.rows
        ]
        widths = [max(len(row[i]) for row in table) for i in range(len(head))]
        for row in table:
            cells = "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
            lines.append(("  " + cells).rstrip())
        return "\n".join(visible(line, keep="") for line in lines)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "batches": [r.to_dict() for r in self.rows]}


def _rows(records: Sequence[Mapping[str, Any]]) -> list[BatchRow]:
    found: dict[str, dict[str, Any]] = {}
    for record in records:
        batch_id = str(record.get("id"))
        state = record.get("state")
        if state == "submitted" and isinstance(record.get("key"), str):
            found.pop(str(record["key"]), None)  # its key's entry, now with an id
        row = found.setdefault(
            batch_id,
            {
                "id": batch_id,
                "provider": str(record.get("provider")),
                "variant": str(record.get("variant")),
                "requests": 0,
                "state": "submitted",
                "status": None,
                "answered": None,
                "unanswered": None,
                "submitted_at": None,
                "ended_at": None,
            },
        )
        if state in ("submitting", "submitted"):
            row["requests"] = len(record.get("requests") or ())
            row["state"] = "not submitted" if state == "submitting" else "submitted"
            row["submitted_at"] = record.get("at")
        elif state in ("ended", "cancelled"):
            row["state"] = state
            row["ended_at"] = record.get("at")
            answered, unanswered = record.get("answered"), record.get("unanswered")
            row["answered"] = answered if isinstance(answered, int) else None
            row["unanswered"] = len(unanswered) if isinstance(unanswered, list) else None
        if isinstance(record.get("status"), str):
            row["status"] = record["status"]
    return [BatchRow(**row) for row in found.values()]


def run_batches(path: str | os.PathLike[str]) -> RunBatches:
    """The batches a results file lists, each with its latest state.

    Examples
    --------
    >>> import os, tempfile
    >>> from evalstats.running._engine import run
    >>> out = os.path.join(tempfile.mkdtemp(), "r.jsonl")
    >>> _ = run("shop", ["v=standin:shop-v1"], runs=1, out=out, progress=False)
    >>> print(run_batches(out))
    r.jsonl: no batches (the run did not use --batch)
    """
    results = read_results(path)
    return RunBatches(str(results.path), tuple(_rows(results.batches)))
