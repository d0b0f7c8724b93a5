"""An offline stand-in judge whose sensitivity and specificity are known.

It lets calibration and the correction of pass rates for judge error be shown
and tested without a model service: it reads the answer from a prompt made by
:func:`evalstats.judged_by`, asks a ``truth`` function whether the answer is
good, and then errs at the rates it was given, independently on every call:
the same answer judged twice may get two verdicts, as from a real judge.
Asked for a score on a scale (``judged_by(..., scale=(1, 5))``), it gives the
point of the scale that the answer's true quality names, or errs to the
mirrored point, at the same rates (see :func:`make_judge`).
"""

from __future__ import annotations

import hashlib
import math
import operator
import threading
from collections.abc import Callable
from typing import Any

from .._validate import as_rate
from ..errors import InvalidArgument
from ..running._checks import sample_seed_now
from ..running._judge import answer_from_prompt, scale_from_prompt

__all__ = ["StandinJudge", "make_judge"]

_PASS_ENDINGS = ("PASS", "**PASS**", "Verdict: PASS", "pass.")
_FAIL_ENDINGS = ("FAIL", "**FAIL**", "Verdict: FAIL.", "> **Fail**")
_REASONS = {
    (True, True): "The answer does what the rubric asks.",
    (True, False): "The answer seems to miss part of what the rubric asks.",
    (False, True): "The answer looks acceptable against the rubric.",
    (False, False): "The answer does not do what the rubric asks.",
}
#: How a score on a scale ends a reply: the score, then the scale's top.
_SCORE_ENDINGS = ("{}", "**{}**", "Score: {}", "{}/{}")
_SCORE_REASONS = {
    True: "The answer was weighed against each part of the rubric.",
    False: "The answer was read quickly against the rubric.",
}


def _point(quality: float, scale: tuple[float, float]) -> float:
    low, high = scale
    point = low + quality * (high - low)
    if low.is_integer() and high.is_integer():
        point = low + math.floor(point - low + 0.5)
    return min(max(point, low), high)


def _plain(value: float) -> str:
    """A number as a judge writes it: digits and a point, never an exponent."""
    from decimal import Decimal

    if value.is_integer():
        return str(int(value))
    return format(Decimal(repr(value)), "f")


class StandinJudge:
    """A judge ``prompt -> text`` that knows the truth and errs at set rates.

    Made by :func:`make_judge`. ``calls`` counts the prompts it has answered.
    """

    __slots__ = ("_lock", "_seen", "calls", "seed", "sensitivity", "specificity", "truth")

    def __init__(
        self, truth: Callable[[str], bool], sensitivity: float, specificity: float, seed: int
    ) -> None:
        self.truth = truth
        self.sensitivity = sensitivity
        self.specificity = specificity
        self.seed = seed
        self.calls = 0
        self._lock = threading.Lock()
        # how often each (sample seed, prompt) was judged: the n-th call draws afresh
        self._seen: dict[bytes, int] = {}

    def _uniforms(self, prompt: str) -> tuple[float, int]:
        sample = sample_seed_now()
        key = hashlib.blake2b(
            prompt.encode("utf-8", "surrogatepass"),
            digest_size=16,
            key=self.seed.to_bytes(16, "little", signed=True),
            person=b"" if sample is None else b"sample",
        )
        if sample is not None:
            key.update(b"\0" + str(sample).encode("ascii"))
        place = key.digest()
        with self._lock:
            self.calls += 1
            n = self._seen.get(place, 0)
            self._seen[place] = n + 1
        digest = hashlib.blake2b(
            place + n.to_bytes(8, "little"),
            digest_size=16,
            key=self.seed.to_bytes(16, "little", signed=True),
        ).digest()
        # 53 random bits give a uniform number in [0, 1); the rest pick a wording.
        u = (int.from_bytes(digest[:8], "little") >> 11) * 2.0**-53
        return u, digest[8]

    def __call__(self, prompt: str) -> str:
        answer = answer_from_prompt(prompt)
        if answer is None:
            raise InvalidArgument(
                "the stand-in judge reads the answer from a prompt made by judged_by; "
                "this prompt has no <answer> block"
            )
        scale = scale_from_prompt(prompt)
        if scale is not None:
            return self._scored(answer, prompt, scale)
        good = bool(self.truth(answer))
        u, pick = self._uniforms(prompt)
        # A good answer is passed with probability `sensitivity`, a bad one
        # failed with probability `specificity`.
        says_pass = u < self.sensitivity if good else not u < self.specificity
        endings = _PASS_ENDINGS if says_pass else _FAIL_ENDINGS
        return f"{_REASONS[(good, says_pass)]}\n{endings[pick % len(endings)]}"

    def quality(self, answer: str) -> float:
        """The answer's true quality in [0, 1]: ``truth(answer)``, True as 1 and False as 0."""
        value: Any = self.truth(answer)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return 1.0 if value else 0.0
        quality = float(value)
        if not 0 <= quality <= 1:  # NaN too
            raise InvalidArgument(
                f"truth({answer[:40]!r}) = {value!r}: a quality must be True, False or a "
                "number from 0 to 1"
            )
        return quality

    def true_point(self, answer: str, scale: tuple[float, float]) -> float:
        """The score the answer's quality names on ``scale`` (a whole number on a
        scale of whole numbers, rounded half up)."""
        return _point(self.quality(answer), scale)

    def _scored(self, answer: str, prompt: str, scale: tuple[float, float]) -> str:
        """A reply with a score: the true point, or its mirror when the judge errs."""
        low, high = scale
        quality = self.quality(answer)
        point = _point(quality, scale)
        u, pick = self._uniforms(prompt)
        right = u < (self.sensitivity if quality >= 0.5 else self.specificity)
        said = point if right else min(max(low + high - point, low), high)
        ending = _SCORE_ENDINGS[pick % len(_SCORE_ENDINGS)].format(_plain(said), _plain(high))
        return f"{_SCORE_REASONS[right]}\n{ending}"

    def __repr__(self) -> str:
        return (
            f"make_judge({getattr(self.truth, '__name__', 'truth')}, "
            f"sensitivity={self.sensitivity:g}, specificity={self.specificity:g}, "
            f"seed={self.seed})"
        )


def make_judge(
    truth: Callable[[str], bool],
    *,
    sensitivity: float,
    specificity: float,
    seed: int = 0,
) -> StandinJudge:
    """An offline judge with a set sensitivity and specificity.

    Parameters
    ----------
    truth : callable
        ``truth(answer) -> bool``: whether an answer is really good. The judge
        reads the answer from a prompt made by :func:`evalstats.judged_by`.
        For a prompt asking for a score, ``truth`` may instead return the
        answer's quality, a number from 0 to 1 (True counts as 1, False as 0).
    sensitivity : float
        Probability that the judge passes a good answer.
    specificity : float
        Probability that the judge fails a bad answer.

        Asked for a score on ``(low, high)``, the judge gives the true point
        ``low + quality * (high - low)`` (rounded half up to a whole number on
        a scale of whole numbers) with probability ``sensitivity`` when the
        quality is at least 0.5, ``specificity`` when below; otherwise it errs
        to the mirrored point ``low + high - point``. With a True/False truth
        and any threshold above ``low``, its pass/fail thus errs at exactly
        these rates, and an answer of true point ``t`` (mapped to [0, 1]) has
        the expected score ``p * t + (1 - p) * (1 - t)``.
    seed : int, optional
        The judge errs independently on every call, at the set rates: the
        same answer judged again (another repeat of a case) is drawn again.
        The draws are fixed by the seed, the prompt and, when the engine is
        scoring a sample, that sample's seed, so a run's verdicts do not
        depend on the order or concurrency of its samples; outside a run,
        the n-th call with a given prompt gets the n-th draw for it.

    Returns
    -------
    StandinJudge
        ``judge(prompt) -> text``: one sentence of reasoning, then a final line
        with PASS or FAIL in one of a few styles (``**PASS**``, ``Verdict:
        FAIL.``, ...), as real judges write them.
        Asked for a score, the final line gives it (``4``, ``**4**``,
        ``Score: 4``, ``4/5``).

    Examples
    --------
    >>> from evalstats.running._judge import judged_by
    >>> judge = make_judge(lambda answer: "A-1042" in answer, sensitivity=1.0, specificity=1.0)
    >>> check = judged_by(judge, "Names the order number.")
    >>> check("Order A-1042 has shipped.").status, check("It has shipped.").status
    ('passed', 'failed')
    >>> graded = judged_by(judge, "Names the order number.", scale=(1, 5), threshold=4)
    >>> graded("Order A-1042 has shipped.").raw_score, graded("It has shipped.").raw_score
    (5.0, 1.0)
    """
    if not callable(truth):
        raise InvalidArgument(f"truth={truth!r} must be a callable truth(answer) -> bool")
    se = float(as_rate("sensitivity", sensitivity))
    sp = float(as_rate("specificity", specificity))
    if isinstance(seed, bool):
        raise InvalidArgument(f"seed={seed!r} must be an integer")
    try:
        seed = operator.index(seed)
    except TypeError:
        raise InvalidArgument(f"seed={seed!r} must be an integer") from None
    if not -(2**127) <= seed < 2**127:
        raise InvalidArgument(f"seed={seed} is out of range; use a 127-bit integer")
    return StandinJudge(truth, se, sp, seed)
