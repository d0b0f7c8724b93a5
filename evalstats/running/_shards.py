"""Shards: one run cut into N shares of its cases, each run apart, merged after.

``run --shard I/N`` runs the I-th of N shares of the cases a run selects, on
any machine (a CI matrix job, a cluster array task), into its own results
file; ``evalstats merge`` joins the N files into the file the whole run would
have written (:func:`evalstats.reading._merge.merge_shards`).

* **Which cases.** The cases are ordered by the SHA-256 of their id and dealt
  out in turn: shard 1 takes the 1st, (N+1)-th, ... of that order. So the
  share depends on the ids alone (not on the file order, the machine or the
  Python version), every case is in exactly one shard, and the shards differ
  in size by at most one case. A case's samples (every repeat, every variant)
  stay in its shard, so no pair is split.
* **The same schedule.** A shard takes the slots of the whole run's schedule
  that belong to its cases, with the whole run's pair numbers and positions
  (who goes first alternates as it would in one run), and the per-sample
  seeds depend on the case, repeat and variant only: merged, the shards hold
  the samples one run would have taken.
* **One run.** Each shard's manifest records, under ``"shard"``, its index and
  count, the number of cases of the whole run, and ``"run"``: a SHA-256 of
  what makes the run (the suite, all its selected cases, the variants
  without prices, runs, seed, holdout cases, selection, judge, counting
  method). Shards merge only when the digests and counts agree, each index
  comes once and every case is there.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InvalidArgument
from ._prices import without_prices

__all__ = ["check_shard", "parse_shard", "run_digest", "shard_cases", "shard_record"]

_SHARD_TEXT = re.compile(r"\s*(\d{1,7})\s*/\s*(\d{1,7})\s*")


def check_shard(value: Any) -> tuple[int, int]:
    """``(index, count)`` checked: whole numbers with ``1 <= index <= count``.

    Examples
    --------
    >>> check_shard((2, 4))
    (2, 4)
    >>> check_shard((5, 4))
    Traceback (most recent call last):
    ...
    evalstats.errors.InvalidArgument: shard=5/4: the index must be from 1 to the count, 4
    """
    if (
        not isinstance(value, tuple | list)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise InvalidArgument(f"shard={value!r} must be (index, count), two whole numbers")
    index, count = int(value[0]), int(value[1])
    if count < 1:
        raise InvalidArgument(f"shard={index}/{count}: the count must be at least 1")
    if not 1 <= index <= count:
        raise InvalidArgument(
            f"shard={index}/{count}: the index must be from 1 to the count, {count}"
        )
    return index, count


def parse_shard(text: str) -> tuple[int, int]:
    """``"I/N"`` read as ``(I, N)`` and checked.

    Examples
    --------
    >>> parse_shard("3/8")
    (3, 8)
    """
    found = _SHARD_TEXT.fullmatch(text) if isinstance(text, str) else None
    if found is None:
        raise InvalidArgument(f"--shard {text!r} must be I/N, such as 1/4 (shard 1 of 4)")
    try:
        return check_shard((int(found.group(1)), int(found.group(2))))
    except InvalidArgument as exc:
        raise InvalidArgument(str(exc).replace("shard=", "--shard ", 1)) from None


def _rank(case_id: str) -> bytes:
    return hashlib.sha256(case_id.encode("utf-8")).digest()


def shard_cases(cases: Sequence[Any], shard: tuple[int, int]) -> tuple[Any, ...]:
    """The cases of shard ``index`` of ``count``, in their given order.

    The cases (objects with an ``id``, or ids) are ordered by the SHA-256 of
    their id and dealt out in turn; refuses more shards than cases, which
    would leave a shard with nothing to run.

    Examples
    --------
    >>> ids = ["a", "b", "c", "d", "e"]
    >>> [shard_cases(ids, (i, 2)) for i in (1, 2)]
    [('a', 'b', 'd'), ('c', 'e')]
    >>> sorted(sum((shard_cases(ids, (i, 3)) for i in (1, 2, 3)), ())) == ids
    True
    """
    index, count = check_shard(shard)
    ids = [c if isinstance(c, str) else c.id for c in cases]
    if count > len(ids):
        raise InvalidArgument(
            f"shard={index}/{count}: the run has {len(ids)} case{'s' * (len(ids) != 1)}, "
            f"fewer than {count} shards; a shard would have nothing to run"
        )
    order = sorted(range(len(ids)), key=lambda i: (_rank(ids[i]), ids[i]))
    mine = set(order[index - 1 :: count])
    return tuple(c for i, c in enumerate(cases) if i in mine)


def run_digest(manifest: Mapping[str, Any], all_cases: Sequence[Any]) -> str:
    """The SHA-256 of what makes a run, the same in each of its shards' manifests."""
    suite = manifest.get("suite")
    identity = {
        "suite": suite.get("sha256") if isinstance(suite, Mapping) else None,
        "cases": [c.to_dict() if hasattr(c, "to_dict") else c for c in all_cases],
        "variants": [without_prices(v) for v in manifest.get("variants") or ()],
        **{
            key: manifest.get(key)
            for key in (
                "runs",
                "seed",
                "include_holdout",
                "selection",
                "judge",
                "counting_method",
            )
        },
    }
    text = json.dumps(identity, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def shard_record(
    manifest: Mapping[str, Any], all_cases: Sequence[Any], shard: tuple[int, int]
) -> dict[str, Any]:
    """What a shard's manifest records under ``"shard"``."""
    return {
        "index": shard[0],
        "count": shard[1],
        "cases": len(all_cases),
        "run": run_digest(manifest, all_cases),
    }
