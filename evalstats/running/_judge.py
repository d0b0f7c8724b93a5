"""Model-graded checks, their calibration against a person, and correction for judge error.

A *judge* is any callable ``prompt -> text``: a model behind a provider, or the
offline stand-in in :mod:`evalstats.demo._judge`. :func:`judged_by` turns a
judge and a rubric into an ordinary check. A judge over a model service (a
provider's, :class:`~evalstats.running.providers.ProviderJudge`) also has
``complete(prompt)``, the whole completion: its check then records the tokens
the call took and the judge's ``model``, which price the judge's calls in a
run's cost. A judge makes mistakes, so before its
pass rates are trusted it is measured: :func:`calibrate` runs a check on answers
a person has already judged and reports how often the two agree, the check's
sensitivity (share of good answers it passed) and specificity (share of bad
answers it failed), Cohen's kappa and every disagreement. From sensitivity and
specificity, :func:`corrected_pass_rate` turns the pass rate a judge reports
into an estimate of the true pass rate, with an interval that carries the
uncertainty of the calibration too.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from .._files import read_input, too_deep
from .._validate import as_counts, check_level, check_not_larger
from ..errors import EvalStatsError, InvalidArgument
from ..stats._intervals import Interval, _pct, _z
from ._checks import INSPECTION_FAILURE, Verdict

__all__ = [
    "Calibration",
    "CalibrationFileError",
    "CalibrationItem",
    "CalibrationReport",
    "JudgedCheck",
    "VerdictPair",
    "answer_from_prompt",
    "calibrate",
    "calibrate_file",
    "calibration_from_pairs",
    "corrected_pass_rate",
    "judged_by",
    "parse_judgement",
    "parse_score",
    "read_calibration_file",
    "scale_from_prompt",
]

#: How much of the judge's reasoning a failure reason keeps.
REASON_LIMIT = 240

_ANSWER_OPEN = "\n<answer>\n"
_ANSWER_CLOSE = "\n</answer>\n"

#: A prompt up to what it asks for: the rubric and the answer.
_PROMPT_HEAD = (
    "You are grading one answer written by an AI assistant against a rubric.\n"
    "\n"
    "Rubric:\n"
    "{rubric}\n"
    "\n"
    "The answer to grade is between the <answer> tags:"
    + _ANSWER_OPEN
    + "{answer}"
    + _ANSWER_CLOSE
    + "\n"
)
_PROMPT = (
    _PROMPT_HEAD + "Reason briefly, in two or three sentences, about whether the answer meets "
    "the rubric. Then end with a final line that says only PASS or FAIL."
)

#: The last paragraph of a prompt asking for a score on a scale (see :func:`judged_by`).
_SCALE_ASK = (
    "Reason briefly, in two or three sentences, about how well the answer meets the "
    "rubric. Then end with a final line that says only your score: {kind} from {low} "
    "(does not meet the rubric at all) to {high} (meets it fully)."
)
# What a prompt made by judged_by says of its scale (read by stand-in judges).
_SCALE_IN_PROMPT = re.compile(
    r"says only your score: (?:a whole number|a number) from (\S+?) \(does not "
    r"meet the rubric at all\) to (\S+?) \(meets it fully\)\.\s*\Z"
)


# --- reading a judge's reply -------------------------------------------------

_EMPHASIS = re.compile(r"[*_`~]+")
_LABEL = (
    r"(?:(?:final|overall|my)\s+)?"
    r"(?:verdict|answer|result|decision|grade|judgement|judgment|assessment|conclusion)"
)
# After emphasis is removed, a verdict line is: any punctuation (quote marks,
# bullets, headings), an optional label such as "Verdict:", the one word PASS or
# FAIL, and nothing after it but punctuation. "PASS or FAIL" and "not a pass"
# have other words on the line and so are not verdicts.
# The pattern has a single run of punctuation before the word when there is no
# label, so that a long line of punctuation is rejected in linear time.
_VERDICT_LINE = re.compile(
    rf"^\W*(?:{_LABEL}(?:\s+is\b)?\W*)?\b(pass|passed|fail|failed)\b\W*$",
    re.IGNORECASE,
)
#: A verdict line is short; longer lines are not read as one.
_VERDICT_LINE_LIMIT = 200


def _snippet(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


def _read_verdict_line(line: str) -> str | None:
    """``"PASS"``, ``"FAIL"`` or None for one line of a judge's reply."""
    line = _EMPHASIS.sub("", line).strip()
    if len(line) > _VERDICT_LINE_LIMIT:
        return None
    match = _VERDICT_LINE.match(line)
    if match is None:
        return None
    return "PASS" if match.group(1).lower().startswith("pass") else "FAIL"


def parse_judgement(text: str) -> Verdict:
    """Read a judge's reply: its last non-empty line must say PASS or FAIL.

    The verdict line is read tolerantly: case, surrounding punctuation,
    markdown emphasis and quoting and a label are ignored, so ``PASS``,
    ``**PASS**``, ``pass``, ``Verdict: FAIL.`` and ``> **Fail**`` are all read.
    A line with anything else on it (``PASS or FAIL``, ``not a pass``) is not a
    verdict, and neither is a verdict that is not on the last non-empty line.

    Parameters
    ----------
    text : str
        The judge's whole reply.

    Returns
    -------
    Verdict
        ``passed``; ``failed`` with the judge's reasoning (shortened) as the
        reason; or ``failed`` with the reason ``the judge gave no clear
        verdict`` and the line it ended with.

    Examples
    --------
    >>> parse_judgement("It quotes the order number.\\n**PASS**").status
    'passed'
    >>> parse_judgement("It never names the order.\\nVerdict: FAIL.").reason
    'the judge failed it: It never names the order.'
    >>> parse_judgement("Could be either.\\nPASS or FAIL").reason
    'the judge gave no clear verdict (it ended with "PASS or FAIL")'
    """
    if not isinstance(text, str):
        raise TypeError(f"a judge must return text, not {type(text).__name__}")
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return Verdict.failed("the judge gave no clear verdict (its reply was empty)")
    said = _read_verdict_line(lines[-1])
    if said is None:
        return Verdict.failed(
            f'the judge gave no clear verdict (it ended with "{_snippet(lines[-1], 80)}")'
        )
    if said == "PASS":
        return Verdict.passed()
    reasoning = _snippet(" ".join(lines[:-1]), REASON_LIMIT)
    return Verdict.failed(f"the judge failed it: {reasoning or '(no reasoning given)'}")


# --- reading a score on a scale ------------------------------------------------

_NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)"
_SCORE_LABEL = (
    r"(?:(?:final|overall|my)\s+)?"
    r"(?:score|rating|grade|verdict|answer|result|mark)"
)
# After emphasis is removed, a score line is: any punctuation (quote marks,
# bullets, headings), an optional label such as "Score:", one number written
# in ASCII digits (a sign or a point counts as the number's only when a digit
# follows it), optionally "/ HIGH" or "out of HIGH", and nothing after it but
# punctuation ("4." and "(4)" are read; "4-5", "3 or 4", "4%" and "4 because"
# are not). The runs of punctuation match one character each way, so a long
# line is read in linear time.
_PUNCT = r"(?:[^\w+\-.%]|[+\-.](?![0-9.]))*"
_SCORE_LINE = re.compile(
    rf"^{_PUNCT}(?:{_SCORE_LABEL}(?:\s+is\b)?{_PUNCT})?"
    rf"({_NUMBER})"
    rf"(?:\s*(?:/|\bout\s+of\b)\s*({_NUMBER}))?"
    r"[^\w+\-%]*$",
    re.IGNORECASE,
)


def _scale_number(value: float) -> str:
    """A scale's end as a prompt writes it: ``5``, ``0.5``."""
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)


def _read_score_line(line: str, low: float, high: float) -> float | None:
    """The number a line gives on ``[low, high]``, or None if it gives none clearly."""
    line = _EMPHASIS.sub("", line).strip()
    if len(line) > _VERDICT_LINE_LIMIT:
        return None
    match = _SCORE_LINE.match(line)
    if match is None:
        return None
    value = float(match.group(1))
    if match.group(2) is not None and float(match.group(2)) != high:
        return None  # "4/10" on a scale that ends at 5: another scale
    if not math.isfinite(value) or not low <= value <= high:
        return None
    return value


def parse_score(text: str, scale: tuple[float, float]) -> float | None:
    """Read a judge's score on ``scale``: the number on its last non-empty line, or None.

    The score line is read as :func:`parse_judgement` reads a verdict line:
    case, surrounding punctuation, markdown emphasis and quoting and a label
    (``Score:``, ``Rating:``, ``Final score is``) are ignored, as is a
    ``/HIGH`` or ``out of HIGH`` naming the scale's top. The number is
    written in ASCII digits, with an optional sign and decimals; a clear
    decimal within the scale (``3.5``) is taken as given even on a scale of
    whole numbers, which the prompt asks for. Anything else is no score: two
    numbers (``3 or 4``, ``3-4``), a number off the scale (``7``, ``4/10`` on
    ``(1, 5)``), words after it (``4 because ...``), a score on any line but
    the last. Never raises on text.

    Parameters
    ----------
    text : str
        The judge's whole reply.
    scale : (float, float)
        The scale's ``(low, high)``.

    Returns
    -------
    float or None
        The score as given, within ``[low, high]``; None when the reply gives
        no clear score on the scale.

    Examples
    --------
    >>> parse_score("Clear and complete.\\n**Score: 4/5**", (1, 5))
    4.0
    >>> parse_score("Mostly there.\\n3.5", (1, 5))
    3.5
    >>> parse_score("Hard to say.\\n3 or 4", (1, 5)) is None
    True
    >>> parse_score("Excellent.\\n9/10", (1, 5)) is None
    True
    """
    if not isinstance(text, str):
        raise TypeError(f"a judge must return text, not {type(text).__name__}")
    low, high = float(scale[0]), float(scale[1])
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return None
    return _read_score_line(lines[-1], low, high)


def _parse_scored(text: str, scale: tuple[float, float], threshold: float | None) -> Verdict:
    """A scaled judge's reply as a verdict: scored on the scale, or unclear."""
    raw = parse_score(text, scale)
    if raw is None:
        lines = [line for line in text.splitlines() if line.strip()]
        low, high = scale
        said = f'it ended with "{_snippet(lines[-1], 80)}"' if lines else "its reply was empty"
        # Unclear: a failure, as an unclear PASS/FAIL reply is, and the lowest
        # score, so that unclear replies cannot lift a mean score by leaving it.
        return Verdict(
            "failed",
            f"the judge gave no clear score from {low:g} to {high:g} ({said})",
            score=0.0,
            scale=(low, high),
        )
    verdict = Verdict.scored(raw, scale=scale, threshold=threshold)
    if verdict.is_failed:
        lines = [line for line in text.splitlines() if line.strip()]
        reasoning = _snippet(" ".join(lines[:-1]), REASON_LIMIT)
        if reasoning:
            verdict = dataclasses.replace(verdict, reason=f"{verdict.reason}: {reasoning}")
    return verdict


# --- the check -----------------------------------------------------------------


def answer_from_prompt(prompt: str) -> str | None:
    """The answer inside a prompt made by :func:`judged_by`, or None if there is none.

    Stand-in judges use this to read the answer they are asked to grade. The
    answer runs from the first ``<answer>`` line to the last ``</answer>``
    line, so an answer that itself contains such tags is still read whole.

    Examples
    --------
    >>> check = judged_by(lambda prompt: "PASS", "Quotes the order number.")
    >>> answer_from_prompt(check.prompt("Your order A-1042 has shipped."))
    'Your order A-1042 has shipped.'
    """
    if not isinstance(prompt, str):
        return None
    start = prompt.find(_ANSWER_OPEN)
    if start < 0:
        return None
    body = start + len(_ANSWER_OPEN)
    end = prompt.rfind(_ANSWER_CLOSE)
    return prompt[body:end] if end >= body else None


def scale_from_prompt(prompt: str) -> tuple[float, float] | None:
    """The scale a prompt made by :func:`judged_by` asks a score on, or None (PASS/FAIL).

    Stand-in judges use this to answer in kind. Only the instructions after
    the answer are read, so an answer cannot change the scale asked for.

    Examples
    --------
    >>> check = judged_by(lambda prompt: "4", "Polite.", scale=(1, 5))
    >>> scale_from_prompt(check.prompt("Thank you for waiting."))
    (1.0, 5.0)
    >>> scale_from_prompt(judged_by(lambda p: "PASS", "Polite.").prompt("Thanks.")) is None
    True
    """
    if not isinstance(prompt, str):
        return None
    end = prompt.rfind(_ANSWER_CLOSE)
    if end < 0:
        return None
    match = _SCALE_IN_PROMPT.search(prompt, end + len(_ANSWER_CLOSE))
    if match is None:
        return None
    try:
        low, high = float(match.group(1)), float(match.group(2))
    except ValueError:
        return None
    return (low, high) if math.isfinite(low) and math.isfinite(high) and low < high else None


class JudgedCheck:
    """A check that asks a judge whether an answer meets a rubric, or how well.

    Made by :func:`judged_by`; call it with an answer to get a :class:`Verdict`.
    ``scale`` is the scale a score is asked on (None: PASS or FAIL) and
    ``threshold`` the score that passes; a check with a scale is graded.
    """

    __slots__ = ("__name__", "judge", "name", "rubric", "scale", "threshold")

    def __init__(
        self,
        judge: Callable[[str], str],
        rubric: str,
        name: str,
        scale: tuple[float, float] | None = None,
        threshold: float | None = None,
    ) -> None:
        self.judge = judge
        self.rubric = rubric
        self.name = name
        self.__name__ = name
        self.scale = scale
        self.threshold = threshold

    @property
    def graded(self) -> bool:
        """Whether the check gives a score: when it asks for one on a scale."""
        return self.scale is not None

    def prompt(self, answer: str) -> str:
        """The prompt the judge is given for ``answer``."""
        if self.scale is None:
            return _PROMPT.format(rubric=self.rubric, answer=answer)
        low, high = self.scale
        whole = low.is_integer() and high.is_integer()
        ask = _SCALE_ASK.format(
            kind="a whole number" if whole else "a number",
            low=_scale_number(low),
            high=_scale_number(high),
        )
        return _PROMPT_HEAD.format(rubric=self.rubric, answer=answer) + ask

    def __call__(self, answer: Any) -> Verdict:
        if answer is None or (isinstance(answer, str) and not answer.strip()):
            return Verdict.failed(f"{INSPECTION_FAILURE}: the answer is empty")
        if not isinstance(answer, str):
            return Verdict.failed(
                f"{INSPECTION_FAILURE}: the answer is {type(answer).__name__}, not text"
            )
        prompt = self.prompt(answer)
        complete = getattr(self.judge, "complete", None)
        if not callable(complete):
            return self.read_reply(prompt, self.judge(prompt))
        # A judge over a model service (a provider's, batched or not) gives its whole
        # completion: the reply, and the tokens the call took, kept for the cost.
        done = complete(prompt)
        model = getattr(self.judge, "model", None) or getattr(done, "model", None)
        return self.read_reply(
            prompt, done.answer, tokens=getattr(done, "tokens", None), model=model
        )

    def read_reply(
        self,
        prompt: str,
        reply: str,
        *,
        tokens: Mapping[str, int | None] | None = None,
        model: str | None = None,
    ) -> Verdict:
        """The verdict a judge's ``reply`` to ``prompt`` gives, keeping both as evidence:
        PASS or FAIL (:func:`parse_judgement`), or a score on the check's scale
        (:func:`parse_score`). For replies obtained another way than by calling
        ``judge`` (a batch of requests). ``tokens`` (``{"input": n, "output": n}``)
        and ``model`` are what the judge's call took and the model it asked, when
        known: the verdict carries them (``judge_tokens``, ``judge_model``) for the
        run's cost."""
        evidence = {"prompt": prompt, "reply": reply}
        usage = {"judge_tokens": tokens, "judge_model": model if isinstance(model, str) else None}
        if self.scale is not None:
            if not isinstance(reply, str):
                raise TypeError(f"a judge must return text, not {type(reply).__name__}")
            verdict = _parse_scored(reply, self.scale, self.threshold)
            return dataclasses.replace(verdict, evidence=evidence, **usage)
        verdict = parse_judgement(reply)
        return Verdict(verdict.status, verdict.reason, evidence=evidence, **usage)

    def __repr__(self) -> str:
        scale = ""
        if self.scale is not None:
            scale = f", scale=({self.scale[0]:g}, {self.scale[1]:g})"
            if self.threshold is not None:
                scale += f", threshold={self.threshold:g}"
        return f"judged_by(rubric={_snippet(self.rubric, 60)!r}{scale}, name={self.name!r})"


def judged_by(
    judge: Callable[[str], str],
    rubric: str,
    *,
    scale: tuple[float, float] | None = None,
    threshold: float | None = None,
    name: str | None = None,
) -> JudgedCheck:
    """A model-graded check: ask ``judge`` whether an answer meets ``rubric``, or how well.

    The judge is given a prompt holding the rubric and the answer, asked to
    reason briefly and to end with a line that says PASS or FAIL; that last
    non-empty line decides (see :func:`parse_judgement`). With ``scale``, the
    judge is asked instead for a score on it (``scale=(1, 5)``: "a whole
    number from 1 (does not meet the rubric at all) to 5 (meets it fully)"),
    and the check is graded: its verdict is
    :meth:`Verdict.scored(score, scale=scale, threshold=threshold)
    <evalstats.running._checks.Verdict.scored>`, the score mapped to [0, 1]
    and kept as given. A judge makes mistakes: measure it with
    :func:`calibrate` before trusting its pass rates, and correct them with
    :func:`corrected_pass_rate`.

    Parameters
    ----------
    judge : callable
        ``judge(prompt) -> text``: a model behind a provider, or
        :func:`evalstats.demo._judge.make_judge` offline.
    rubric : str
        What a good answer does, in plain words.
    scale : (float, float), optional
        Ask for a score from ``low`` to ``high`` instead of PASS or FAIL. The
        reply's last non-empty line must give one number on the scale (see
        :func:`parse_score`; a clear decimal such as ``3.5`` is taken as
        given, even on a scale of whole numbers).
    threshold : float, optional
        With ``scale``: the score that passes, on the scale; without one, only
        the top of the scale passes (as :meth:`~evalstats.running._checks.Verdict.scored`).
    name : str, optional
        The check's name in reports; by default ``judged_by`` and the start of
        the rubric.

    Returns
    -------
    JudgedCheck
        ``check(answer) -> Verdict``:

        - an empty answer fails with ``could not be inspected: the answer is
          empty`` and the judge is not called;
        - PASS passes; FAIL fails with the judge's reasoning (shortened) as the
          reason; a reply without a clear verdict fails with ``the judge gave no
          clear verdict``.
        - with ``scale``: the score given, passed or failed at ``threshold``;
          a reply without one clear number on the scale (``3 or 4``, ``7`` on
          ``(1, 5)``) fails with ``the judge gave no clear score``, as an
          unclear PASS/FAIL reply does, and scores 0 (the bottom of the scale,
          with no raw score, since the judge gave none), so that unclear
          replies cannot lift a mean score by leaving it.

    Raises
    ------
    InvalidArgument
        At construction, if ``judge`` is not callable or ``rubric`` is empty,
        ``scale`` is not two finite numbers, low below high, or ``threshold``
        is off the scale or given without one.

    Notes
    -----
    Exceptions raised by the judge are not turned into verdicts: they
    propagate to the caller. A
    :class:`~evalstats.errors.TransientProviderError` (rate limit, 5xx,
    timeout) therefore reaches the engine, which retries it and then records
    the check as unmeasured for the judge (``unscored``, marked
    ``judge_unmeasured``), not failed: the answer was never graded. Any other exception
    (a permanent provider error, a bug in the judge) propagates too, and the
    engine reports it as the sample's error, because a judge that cannot
    grade must not quietly become a string of failures. A judge that returns
    something other than text raises ``TypeError`` for the same reason.

    Examples
    --------
    >>> def judge(prompt):
    ...     good = "A-1042" in answer_from_prompt(prompt)
    ...     return "It names the order.\\nPASS" if good else "No order number.\\nFAIL"
    >>> check = judged_by(judge, "The reply names the customer's order number.")
    >>> check("Your order A-1042 ships today.")
    Verdict(status='passed', reason='')
    >>> check("It ships today.").reason
    'the judge failed it: No order number.'
    >>> check("").reason
    'could not be inspected: the answer is empty'
    >>> graded = judged_by(lambda prompt: "Clear.\\nScore: 4", "Polite.", scale=(1, 5), threshold=4)
    >>> v = graded("Thank you for waiting.")
    >>> v.status, v.score, v.raw_score
    ('passed', 0.75, 4.0)
    """
    if not callable(judge):
        raise InvalidArgument(
            f"judge={judge!r} must be a callable that takes a prompt and returns text"
        )
    if not isinstance(rubric, str) or not rubric.strip():
        raise InvalidArgument(f"rubric={rubric!r} must be a non-empty description of a good answer")
    if name is None:
        name = f"judged_by({_snippet(rubric, 40)!r})"
    elif not isinstance(name, str) or not name.strip():
        raise InvalidArgument(f"name={name!r} must be a non-empty string")
    checked_scale, cut = _judge_scale(scale, threshold)
    return JudgedCheck(judge, rubric.strip(), name, checked_scale, cut)


def _judge_scale(scale: Any, threshold: Any) -> tuple[tuple[float, float] | None, float | None]:
    """A judge's scale and threshold checked at the door, in one line naming each."""
    from ._checks import _on_scale, _scale

    if scale is None:
        if threshold is not None:
            raise InvalidArgument(
                f"threshold={threshold!r} needs a scale: give scale=(low, high) to ask the "
                "judge for a score"
            )
        return None, None
    if isinstance(scale, str | bytes):
        raise InvalidArgument(f"scale={scale!r} must be two numbers (low, high)")
    low, high = _scale(scale)
    cut = None if threshold is None else _on_scale("threshold", threshold, low, high)
    return (low, high), cut


# --- calibration -----------------------------------------------------------------


@dataclass(frozen=True)
class CalibrationItem:
    """One answer in a calibration: what the person said and what the check said.

    ``person`` is ``"passed"`` or ``"failed"``; ``check`` is ``"passed"``,
    ``"failed"`` or ``"unscored"``; ``reason`` is the check's reason;
    ``source`` says where the verdicts came from (``file.csv:7``), if a file.
    """

    answer: str
    person: str
    check: str
    reason: str = ""
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "person": self.person,
            "check": self.check,
            "reason": self.reason,
            "source": self.source,
        }

    def describe(self) -> str:
        where = f"{self.source}: " if self.source else ""
        what = f'"{_snippet(self.answer, 60)}"' if self.answer else "(answer not recorded)"
        why = f" ({_snippet(self.reason, 100)})" if self.reason else ""
        return f"{where}person {self.person}, check {self.check}: {what}{why}"


def _rate_interval(successes: int, trials: int, level: float, empty: str) -> Interval:
    if trials == 0:
        # Nothing to estimate from: say so rather than report a confident 0%.
        return Interval(math.nan, 0.0, 1.0, level, "wilson", note=empty)
    from ..stats._intervals import proportion_ci

    return proportion_ci(successes, trials, level=level, method="wilson")


def _kappa_interval(table: np.ndarray, level: float) -> Interval:
    """Cohen's (1960) kappa for a 2x2 table with a Wald interval.

    The standard error is the large-sample one of Fleiss, Cohen & Everitt
    (1969), as computed by statsmodels' ``cohens_kappa``; the interval is
    kappa +/- z * ASE, clipped to [-1, 1].
    """
    n_good, n_bad = int(table[0].sum()), int(table[1].sum())
    if n_good == 0 or n_bad == 0:
        # With only good (or only bad) answers the person's verdicts do not vary
        # and kappa is 0 or undefined whatever the check does: not a measurement.
        return Interval(
            math.nan,
            math.nan,
            math.nan,
            level,
            "cohen_kappa",
            note="kappa needs both good and bad answers judged by the person",
        )
    if int(table[:, 0].sum()) == 0 or int(table[:, 1].sum()) == 0:
        return Interval(
            math.nan,
            math.nan,
            math.nan,
            level,
            "cohen_kappa",
            note="kappa is undefined when the check gave the same verdict on every answer",
        )
    from statsmodels.stats.inter_rater import cohens_kappa

    result = cohens_kappa(table.astype(float))
    kappa = float(result.kappa)
    half = _z(level) * float(result.std_kappa)
    return Interval(
        kappa,
        max(-1.0, kappa - half),
        min(1.0, kappa + half),
        level,
        "cohen_kappa",
        note="Wald interval with the standard error of Fleiss, Cohen & Everitt (1969)",
    )


#: The default limits of :attr:`Calibration.passed_calibration`: the check is
#: trusted when its sensitivity and its specificity are each shown to be at
#: least 80% (the lower end of their intervals).
DEFAULT_MIN_SENSITIVITY = 0.8
DEFAULT_MIN_SPECIFICITY = 0.8


def _check_minimum(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        hint = (
            " (did you mean a share, such as 0.8?)"
            if isinstance(value, int | float) and 1 < value <= 100
            else ""
        )
        raise InvalidArgument(f"{name}={value!r} must be a share between 0 and 1{hint}")
    return float(value)


def _pct_text(value: float) -> str:
    return f"{100 * value:.0f}%"


@dataclass(frozen=True)
class Calibration:
    """How a check's verdicts compare with a person's on the same answers.

    Attributes
    ----------
    true_pass, false_fail : int
        Good answers (the person passed them) that the check passed / failed.
    true_fail, false_pass : int
        Bad answers (the person failed them) that the check failed / passed.
    agreement : Interval
        Share of scored answers on which the check and the person agree.
    sensitivity : Interval
        Share of good answers the check passed: ``true_pass / n_good``.
    specificity : Interval
        Share of bad answers the check failed: ``true_fail / n_bad``.
    kappa : Interval
        Cohen's kappa (agreement beyond chance) with a Wald interval; NaN with
        a note when it is undefined.
    disagreements : tuple of CalibrationItem
        Every answer on which the check and the person disagree.
    unscored : tuple of CalibrationItem
        Answers the check did not score. They are reported, and left out of
        every count and rate above: unscored is not agreement.
    level : float
        Confidence level of the intervals.
    """

    true_pass: int
    false_fail: int
    true_fail: int
    false_pass: int
    agreement: Interval
    sensitivity: Interval
    specificity: Interval
    kappa: Interval
    disagreements: tuple[CalibrationItem, ...] = ()
    unscored: tuple[CalibrationItem, ...] = ()
    level: float = 0.95
    min_sensitivity: float = DEFAULT_MIN_SENSITIVITY
    min_specificity: float = DEFAULT_MIN_SPECIFICITY

    @classmethod
    def from_counts(
        cls,
        true_pass: int,
        false_fail: int,
        true_fail: int,
        false_pass: int,
        *,
        level: float = 0.95,
        disagreements: Sequence[CalibrationItem] = (),
        unscored: Sequence[CalibrationItem] = (),
        min_sensitivity: float = DEFAULT_MIN_SENSITIVITY,
        min_specificity: float = DEFAULT_MIN_SPECIFICITY,
    ) -> Calibration:
        """Build a calibration from the four counts of the person-by-check table.

        Examples
        --------
        >>> cal = Calibration.from_counts(45, 5, 40, 10)
        >>> print(cal.sensitivity, cal.specificity)
        90% (79% to 96%) 80% (67% to 89%)
        """
        level = check_level(level)
        min_sensitivity = _check_minimum("min_sensitivity", min_sensitivity)
        min_specificity = _check_minimum("min_specificity", min_specificity)
        counts = {}
        for name, value in (
            ("true_pass", true_pass),
            ("false_fail", false_fail),
            ("true_fail", true_fail),
            ("false_pass", false_pass),
        ):
            arr = as_counts(name, value)
            if arr.ndim:
                raise InvalidArgument(f"{name} must be a single count, not an array")
            counts[name] = int(arr)
        tp, ff, tf, fp = (counts[k] for k in ("true_pass", "false_fail", "true_fail", "false_pass"))
        n_good, n_bad = tp + ff, tf + fp
        table = np.array([[tp, ff], [fp, tf]])
        return cls(
            true_pass=tp,
            false_fail=ff,
            true_fail=tf,
            false_pass=fp,
            agreement=_rate_interval(tp + tf, n_good + n_bad, level, "no answer was scored"),
            sensitivity=_rate_interval(tp, n_good, level, "no good answer was scored"),
            specificity=_rate_interval(tf, n_bad, level, "no bad answer was scored"),
            kappa=_kappa_interval(table, level),
            disagreements=tuple(disagreements),
            unscored=tuple(unscored),
            level=level,
            min_sensitivity=min_sensitivity,
            min_specificity=min_specificity,
        )

    @property
    def n_good(self) -> int:
        """Scored answers the person passed."""
        return self.true_pass + self.false_fail

    @property
    def n_bad(self) -> int:
        """Scored answers the person failed."""
        return self.true_fail + self.false_pass

    @property
    def n(self) -> int:
        """Scored answers (unscored ones are not counted)."""
        return self.n_good + self.n_bad

    @property
    def agreed(self) -> int:
        """Scored answers on which the check and the person agree."""
        return self.true_pass + self.true_fail

    @property
    def passed_calibration(self) -> bool:
        """Whether the check is good enough to trust, by the rule in :attr:`rule`.

        True when the lower end of the sensitivity interval is at least
        ``min_sensitivity`` and the lower end of the specificity interval is at
        least ``min_specificity``: the check's error rates are shown, at the
        calibration's confidence level, to be no worse than those limits. No
        good or no bad answers, so that one of the two is unknown, is False.
        Unscored answers are listed but neither help nor hurt.
        """
        return not self._shortfalls()

    @property
    def rule(self) -> str:
        """The rule :attr:`passed_calibration` applies, in words."""
        return (
            f"the lower ends of the {self.level:.0%} intervals must reach "
            f"{_pct_text(self.min_sensitivity)} for sensitivity and "
            f"{_pct_text(self.min_specificity)} for specificity"
        )

    def _shortfalls(self) -> list[str]:
        problems = []
        for what, iv, need, count, kind in (
            ("sensitivity", self.sensitivity, self.min_sensitivity, self.n_good, "good"),
            ("specificity", self.specificity, self.min_specificity, self.n_bad, "bad"),
        ):
            if count == 0:
                problems.append(f"no {kind} answers were scored, so {what} is unknown")
            elif float(iv.low) < need:
                problems.append(
                    f"{what} could be as low as {_pct_text(float(iv.low))} "
                    f"(needs {_pct_text(need)})"
                )
        return problems

    def __str__(self) -> str:
        def fmt_kappa(iv: Interval) -> str:
            if math.isnan(float(iv.estimate)):
                return f"n/a ({iv.note})"
            return f"{float(iv.estimate):.2f} ({float(iv.low):.2f} to {float(iv.high):.2f})"

        lines = [
            f"calibration against a person's verdicts on {self.n} scored answers "
            f"({self.n_good} good, {self.n_bad} bad), {self.level:.0%} intervals",
            f"  agreement      {self.agreement}  {self.agreed} of {self.n} agree",
            f"  sensitivity    {self.sensitivity}  passed {self.true_pass} of "
            f"{self.n_good} good answers",
            f"  specificity    {self.specificity}  failed {self.true_fail} of "
            f"{self.n_bad} bad answers",
            f"  Cohen's kappa  {fmt_kappa(self.kappa)}",
        ]
        if self.unscored:
            lines.append(
                f"  unscored       {len(self.unscored)} answer(s) the check did not score, "
                "left out of the figures above"
            )
        shown = 10
        if self.disagreements:
            lines.append(f"  disagreements  {len(self.disagreements)}:")
            lines.extend(f"    {item.describe()}" for item in self.disagreements[:shown])
            if len(self.disagreements) > shown:
                lines.append(f"    ... and {len(self.disagreements) - shown} more")
        problems = self._shortfalls()
        if not problems:
            verdict = (
                f"yes: sensitivity at least {_pct_text(float(self.sensitivity.low))}, "
                f"specificity at least {_pct_text(float(self.specificity.low))}"
            )
        else:
            verdict = "no: " + "; ".join(problems)
        lines.append(f"  rule           {self.rule}")
        lines.append(f"  passed calibration: {verdict}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (NaN becomes None)."""
        return {
            "true_pass": self.true_pass,
            "false_fail": self.false_fail,
            "true_fail": self.true_fail,
            "false_pass": self.false_pass,
            "n_good": self.n_good,
            "n_bad": self.n_bad,
            "agreement": self.agreement.to_dict(),
            "sensitivity": self.sensitivity.to_dict(),
            "specificity": self.specificity.to_dict(),
            "kappa": self.kappa.to_dict(),
            "passed_calibration": self.passed_calibration,
            "rule": {
                "min_sensitivity": self.min_sensitivity,
                "min_specificity": self.min_specificity,
                "text": self.rule,
            },
            "disagreements": [item.to_dict() for item in self.disagreements],
            "unscored": [item.to_dict() for item in self.unscored],
            "level": self.level,
        }


def _run(check: Callable[[Any], Any], answer: Any) -> Verdict:
    try:
        return Verdict.of(check(answer))
    except TypeError as exc:
        if "a check must return" in str(exc):
            raise InvalidArgument(f"check={check!r}: {exc}") from None
        raise


def _answers(name: str, value: Any) -> list[Any]:
    if isinstance(value, str | bytes):
        raise InvalidArgument(f"{name} must be a list of answers, not a single string")
    try:
        return list(value)
    except TypeError:
        raise InvalidArgument(f"{name}={value!r} must be a list of answers") from None


def _tally(
    judged: Iterable[tuple[bool, Verdict, str, str]], level: float, **rule: float
) -> Calibration:
    tp = ff = tf = fp = 0
    disagreements: list[CalibrationItem] = []
    unscored: list[CalibrationItem] = []
    for person_passed, verdict, answer, source in judged:
        item = CalibrationItem(
            answer=answer,
            person="passed" if person_passed else "failed",
            check=verdict.status,
            reason=verdict.reason,
            source=source,
        )
        if not verdict.is_scored:
            unscored.append(item)
        elif person_passed and verdict.is_passed:
            tp += 1
        elif person_passed:
            ff += 1
            disagreements.append(item)
        elif verdict.is_passed:
            fp += 1
            disagreements.append(item)
        else:
            tf += 1
    return Calibration.from_counts(
        tp, ff, tf, fp, level=level, disagreements=disagreements, unscored=unscored, **rule
    )


def calibrate(
    check: Callable[[Any], Any],
    good: Iterable[Any],
    bad: Iterable[Any],
    *,
    level: float = 0.95,
    min_sensitivity: float = DEFAULT_MIN_SENSITIVITY,
    min_specificity: float = DEFAULT_MIN_SPECIFICITY,
) -> Calibration:
    """Measure a check against answers a person has already judged.

    Parameters
    ----------
    check : callable
        Any check: ``check(answer)`` returning ``None | str`` or a
        :class:`Verdict`, for example one made by :func:`judged_by`.
    good : iterable
        Answers the person passed.
    bad : iterable
        Answers the person failed.
    level : float, optional
        Confidence level of the intervals (0.95).
    min_sensitivity, min_specificity : float, optional
        The rule of ``passed_calibration``: the lower ends of the sensitivity
        and specificity intervals must reach these (0.8 each).

    Returns
    -------
    Calibration
        Agreement, sensitivity (share of good answers the check passed),
        specificity (share of bad answers the check failed), the counts behind
        them, Cohen's kappa, every disagreement and every unscored answer.

    Raises
    ------
    InvalidArgument
        If ``check`` is not callable, is a judge asked for a score with no
        threshold (calibration compares pass/fail), or both lists are empty. Exceptions
        raised by the check itself (such as a
        :class:`~evalstats.errors.TransientProviderError` from a judge)
        propagate: an answer that was never graded cannot be calibrated.

    Notes
    -----
    Sensitivity and specificity carry Wilson (1927) intervals; kappa is Cohen's
    (1960), with the large-sample standard error of Fleiss, Cohen & Everitt
    (1969) as computed by statsmodels. Unscored answers are left out of every
    count, as elsewhere in evalstats, and listed in ``unscored``.

    References
    ----------
    .. [1] Cohen, J. (1960). A coefficient of agreement for nominal scales.
       Educational and Psychological Measurement 20(1), 37-46.
    .. [2] Fleiss, J. L., Cohen, J. & Everitt, B. S. (1969). Large sample
       standard errors of kappa and weighted kappa. Psychological Bulletin
       72(5), 323-327.
    .. [3] Wilson, E. B. (1927). Probable inference, the law of succession,
       and statistical inference. JASA 22(158), 209-212.

    Examples
    --------
    >>> def mentions_order(answer):
    ...     return None if "A-1042" in answer else "doesn't mention 'A-1042'"
    >>> cal = calibrate(
    ...     mentions_order,
    ...     good=["Order A-1042 ships today.", "A-1042 is on its way.", "It ships today."],
    ...     bad=["Which order?", "Order A-1042? We have no such order."],
    ... )
    >>> cal.true_pass, cal.false_fail, cal.true_fail, cal.false_pass
    (2, 1, 1, 1)
    >>> cal.passed_calibration
    False
    """
    if not callable(check):
        raise InvalidArgument(f"check={check!r} must be a callable check(answer)")
    _refuse_scale_without_threshold(check)
    level = check_level(level)
    rule = _rule(min_sensitivity, min_specificity)
    good_list = _answers("good", good)
    bad_list = _answers("bad", bad)
    if not good_list and not bad_list:
        raise InvalidArgument(
            "good and bad are both empty; a calibration needs answers a person has judged"
        )
    judged = [(True, _run(check, a), _answer_text(a), "") for a in good_list]
    judged += [(False, _run(check, a), _answer_text(a), "") for a in bad_list]
    return _tally(judged, level, **rule)


def _refuse_scale_without_threshold(check: Any) -> None:
    """A judge asked for a score is calibrated on its pass/fail: it needs a threshold."""
    if isinstance(check, JudgedCheck) and check.scale is not None and check.threshold is None:
        low, high = check.scale
        raise InvalidArgument(
            f"check={check!r} asks for a score from {low:g} to {high:g} with no threshold, "
            "so only full marks pass; give judged_by(..., threshold=...) to calibrate the "
            "pass/fail it gives against the person's"
        )


def _rule(min_sensitivity: Any, min_specificity: Any) -> dict[str, float]:
    return {
        "min_sensitivity": _check_minimum("min_sensitivity", min_sensitivity),
        "min_specificity": _check_minimum("min_specificity", min_specificity),
    }


def _answer_text(answer: Any) -> str:
    return answer if isinstance(answer, str) else repr(answer)


class VerdictPair(NamedTuple):
    """A person's verdict and a check's verdict on one answer.

    ``check`` is None when the check did not score the answer.
    """

    human: bool
    check: bool | None
    answer: str = ""
    source: str = ""


def calibration_from_pairs(
    pairs: Iterable[Sequence[Any]],
    *,
    level: float = 0.95,
    min_sensitivity: float = DEFAULT_MIN_SENSITIVITY,
    min_specificity: float = DEFAULT_MIN_SPECIFICITY,
) -> Calibration:
    """A calibration from recorded verdict pairs ``(human_passed, check_passed)``.

    Parameters
    ----------
    pairs : iterable
        Each item is ``(human_passed, check_passed)`` or a :class:`VerdictPair`
        (which may also carry the answer and where it came from).
        ``human_passed`` is a bool; ``check_passed`` is a bool, or None when the
        check did not score the answer.
    level : float, optional
        Confidence level of the intervals (0.95).
    min_sensitivity, min_specificity : float, optional
        The rule of ``passed_calibration`` (see :func:`calibrate`).

    Examples
    --------
    >>> cal = calibration_from_pairs([(True, True), (True, False), (False, False)])
    >>> cal.true_pass, cal.false_fail, cal.true_fail, cal.false_pass
    (1, 1, 1, 0)
    """
    level = check_level(level)
    rule = _rule(min_sensitivity, min_specificity)
    judged: list[tuple[bool, Verdict, str, str]] = []
    for i, pair in enumerate(_answers("pairs", pairs)):
        try:
            items = tuple(pair)
        except TypeError:
            raise InvalidArgument(
                f"pairs[{i}]={pair!r} must be a pair (human_passed, check_passed)"
            ) from None
        if len(items) < 2 or len(items) > 4:
            raise InvalidArgument(
                f"pairs[{i}]={pair!r} must be a pair (human_passed, check_passed)"
            )
        human, check = items[0], items[1]
        answer = str(items[2]) if len(items) > 2 else ""
        source = str(items[3]) if len(items) > 3 else ""
        if not isinstance(human, bool | np.bool_):
            raise InvalidArgument(f"pairs[{i}] human verdict {human!r} must be True or False")
        if check is None:
            verdict = Verdict.unscored("not scored by the check")
        elif isinstance(check, bool | np.bool_):
            verdict = Verdict.passed() if check else Verdict("failed")
        else:
            raise InvalidArgument(
                f"pairs[{i}] check verdict {check!r} must be True, False or None (unscored)"
            )
        judged.append((bool(human), verdict, answer, source))
    if not judged:
        raise InvalidArgument("pairs is empty; a calibration needs at least one verdict pair")
    return _tally(judged, level, **rule)


# --- correcting a pass rate for judge error ------------------------------------


def _lang_reiczigel(
    x: Any, n: Any, tp: Any, n_good: Any, tf: Any, n_bad: Any, z: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rogan-Gladen estimate and Lang & Reiczigel (2014) limits, vectorised.

    ``x`` of ``n`` answers passed by the judge; the judge passed ``tp`` of
    ``n_good`` good and failed ``tf`` of ``n_bad`` bad calibration answers.
    Returns ``(estimate, low, high, widened)``, all clipped to [0, 1]; where
    the adjusted Youden index is not positive the limits are (0, 1);
    ``widened`` marks intervals stretched to contain the estimate.
    """
    x, n, tp, n_good, tf, n_bad = (
        np.asarray(v, dtype=float) for v in (x, n, tp, n_good, tf, n_bad)
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        # Rogan & Gladen (1978): solve p_obs = p Se + (1 - p)(1 - Sp) for p.
        # Written with the false-pass rate 1 - Sp taken from the counts, so that a
        # perfect judge returns the observed rate exactly.
        se, false_pass, ap = tp / n_good, (n_bad - tf) / n_bad, x / n
        estimate = np.clip((ap - false_pass) / (se - false_pass), 0.0, 1.0)

        # Lang & Reiczigel (2014): as Agresti & Coull (1998) do for one
        # proportion, first adjust the counts: z^2/2 passes and z^2/2 fails are
        # added to the observed sample, and one pass and one fail to each
        # calibration sample (the Se and Sp samples).
        z2 = z * z
        n_ = n + z2
        ap_ = (x + z2 / 2) / n_
        n_good_, n_bad_ = n_good + 2, n_bad + 2
        se_, sp_ = (tp + 1) / n_good_, (tf + 1) / n_bad_
        youden_ = se_ + sp_ - 1
        p_ = (ap_ + sp_ - 1) / youden_
        var_se, var_sp = se_ * (1 - se_) / n_good_, sp_ * (1 - sp_) / n_bad_
        # Delta-method variance of the Rogan-Gladen ratio from the three
        # independent binomial samples, at the adjusted values ...
        var = (ap_ * (1 - ap_) / n_ + p_**2 * var_se + (1 - p_) ** 2 * var_sp) / youden_**2
        # ... and a shift of the centre that offsets the skew the uncertain
        # denominator (Se + Sp - 1) gives the ratio.
        shift = 2 * z2 * (p_ * var_se - (1 - p_) * var_sp)
        half = z * np.sqrt(var)
        low = np.clip(p_ + shift - half, 0.0, 1.0)
        high = np.clip(p_ + shift + half, 0.0, 1.0)
    bad = ~(youden_ > 0) | ~np.isfinite(low) | ~np.isfinite(high)
    low = np.where(bad, 0.0, low)
    high = np.where(bad, 1.0, high)
    # The limits are centred on the adjusted estimate, not on the Rogan-Gladen
    # one; with a tiny calibration sample (two bad answers, say) the latter can
    # fall just outside them. An interval must contain its estimate, so there
    # the interval is widened to reach it, which can only add coverage.
    widened = (estimate < low) | (estimate > high)
    low = np.minimum(low, estimate)
    high = np.maximum(high, estimate)
    return estimate, low, high, widened


def _one_sided_bound(
    x: Any, n: Any, tp: Any, n_good: Any, tf: Any, n_bad: Any, level: float, *, upper: bool
) -> np.ndarray:
    """A one-sided bound on the true pass rate that never collapses to a point.

    The Rogan-Gladen ratio p = (a - f) / (s - f), with a the expected rate the
    judge passes, f its false-pass rate (1 - Sp) and s its sensitivity, is
    increasing in a and, where f < a < s, decreasing in f and s. With one-sided
    Clopper-Pearson bounds at error (1 - level) / 3 for each of the three
    independent samples (Bonferroni), all three hold together with probability
    at least ``level``, and the largest ratio over that box, (a_hi - f_lo) /
    (s_lo - f_lo), is an upper bound on p with at least that confidence (1 where
    s_lo <= f_lo). The lower bound is the mirror image, (a_lo - f_hi) / (s_hi -
    f_hi). Clipped to [0, 1].
    """
    from scipy.special import betaincinv

    x, n, tp, n_good, tf, n_bad = (
        np.asarray(v, dtype=float) for v in (x, n, tp, n_good, tf, n_bad)
    )
    err = (1.0 - level) / 3.0
    fp = n_bad - tf  # bad answers the judge passed

    def cp_low(k: np.ndarray, m: np.ndarray) -> np.ndarray:
        return np.where(k > 0, betaincinv(np.maximum(k, 1), m - k + 1, err), 0.0)

    def cp_high(k: np.ndarray, m: np.ndarray) -> np.ndarray:
        return np.where(k < m, betaincinv(k + 1, np.maximum(m - k, 1), 1 - err), 1.0)

    with np.errstate(divide="ignore", invalid="ignore"):
        if upper:
            a, f, s = cp_high(x, n), cp_low(fp, n_bad), cp_low(tp, n_good)
            bound = np.where(s > f, (a - f) / (s - f), 1.0)
        else:
            a, f, s = cp_low(x, n), cp_high(fp, n_bad), cp_high(tp, n_good)
            bound = np.where(s > f, (a - f) / (s - f), 0.0)
    return np.clip(bound, 0.0, 1.0)


def corrected_pass_rate(
    observed_passes: Any,
    trials: Any,
    calibration: Calibration,
    *,
    level: float = 0.95,
) -> Interval:
    """The true pass rate behind a judge's pass rate, corrected for the judge's errors.

    A judge that passes some bad answers and fails some good ones reports
    ``p_obs = p Se + (1 - p)(1 - Sp)`` instead of the true rate ``p``. With the
    sensitivity ``Se`` and specificity ``Sp`` measured by :func:`calibrate`, the
    Rogan-Gladen estimate ``(p_obs + Sp - 1) / (Se + Sp - 1)`` undoes that,
    clipped to [0, 1]. Its interval is the one of Lang & Reiczigel (2014),
    which carries the uncertainty of the calibration counts as well as that of
    the observed pass rate: a small calibration gives a wide interval.

    Parameters
    ----------
    observed_passes : int or array of int
        Answers the judge passed.
    trials : int or array of int
        Answers the judge scored.
    calibration : Calibration
        The judge measured against a person, with both good and bad answers.
    level : float, optional
        Confidence level (0.95).

    Returns
    -------
    Interval
        ``method="lang_reiczigel"``; the note gives the sensitivity and
        specificity used. Zero trials give a NaN estimate with limits (0, 1).

    Raises
    ------
    InvalidArgument
        If the calibration lacks good or bad answers, or if the judge is no
        better than chance (``Se + Sp <= 1``): its verdicts then carry no
        information about the true pass rate, and nothing can be corrected.

    Notes
    -----
    Lang & Reiczigel adapt the "add two successes and two failures" idea of
    Agresti & Coull (1998) to the Rogan-Gladen ratio: they add ``z^2/2`` passes
    and fails to the observed sample and one pass and one fail to each
    calibration sample, take the delta-method variance of the ratio from the
    three independent binomial samples at these adjusted values, and shift the
    centre by ``2 z^2 (P' Se'(1-Se')/n_Se' - (1-P') Sp'(1-Sp')/n_Sp')``. Their
    simulations show close to nominal coverage from about 30 answers in each
    sample, for sensitivity and specificity of at least 0.5. The same formulas
    are used by ``prevSeSp`` in the R package asht. The calibration answers are
    assumed to be like the answers being scored, and the three samples
    independent.

    References
    ----------
    .. [1] Rogan, W. J. & Gladen, B. (1978). Estimating prevalence from the
       results of a screening test. American Journal of Epidemiology 107(1),
       71-76.
    .. [2] Lang, Z. & Reiczigel, J. (2014). Confidence limits for prevalence of
       disease adjusted for estimated sensitivity and specificity. Preventive
       Veterinary Medicine 113(1), 13-22.
    .. [3] Agresti, A. & Coull, B. A. (1998). Approximate is better than
       "exact" for interval estimation of binomial proportions. The American
       Statistician 52(2), 119-126.

    Examples
    --------
    A judge that passes 90 of 100 good answers and fails 80 of 100 bad ones
    passed 60 of 100 answers; the true pass rate is nearer 57%:

    >>> cal = Calibration.from_counts(90, 10, 80, 20)
    >>> print(corrected_pass_rate(60, 100, cal))
    57% (41% to 72%)
    """
    level = check_level(level)
    k, n, se, sp = _correction_inputs(observed_passes, trials, calibration)
    cal = (calibration.true_pass, calibration.n_good, calibration.true_fail, calibration.n_bad)
    estimate, low, high, widened = _lang_reiczigel(k, n, *cal, _z(level))
    empty = n == 0
    estimate = np.where(empty, np.nan, estimate)
    low = np.where(empty, 0.0, low)
    high = np.where(empty, 1.0, high)
    # A two-sided interval that clipping collapsed to 0% (or 100%) claims a
    # certainty no calibration gives: the observed rate lies within the judge's
    # own error. Say so and give the one-sided bound instead.
    at_zero = ~empty & (high <= 0.0)
    at_one = ~empty & (low >= 1.0) & ~at_zero
    if at_zero.any():
        high = np.where(at_zero, _one_sided_bound(k, n, *cal, level, upper=True), high)
    if at_one.any():
        low = np.where(at_one, _one_sided_bound(k, n, *cal, level, upper=False), low)
    collapsed = at_zero | at_one
    note = (
        f"Rogan-Gladen estimate, Lang & Reiczigel interval; judge sensitivity {se:.3g} "
        f"(from {calibration.n_good} good answers), specificity {sp:.3g} "
        f"(from {calibration.n_bad} bad answers)"
    )
    if np.ndim(widened) and bool(np.any(widened & ~empty)):
        note += "; some intervals widened to contain their estimate (tiny calibration sample)"
    if not np.ndim(estimate):
        return _scalar_correction(
            int(k), int(n), se, sp, estimate, low, high, widened, at_zero, collapsed, note, level
        )
    if bool(np.any(collapsed)):
        note += (
            "; where the observed rate was within the judge's error (the interval "
            f"collapsed at 0 or 1), {_one_sided_words(level)}"
        )
    return Interval(estimate, low, high, level, "lang_reiczigel", note=note)


def _correction_inputs(
    observed_passes: Any, trials: Any, calibration: Any
) -> tuple[Any, Any, float, float]:
    """The checked counts, and the judge's sensitivity and specificity."""
    if not isinstance(calibration, Calibration):
        raise InvalidArgument(
            f"calibration={calibration!r} must be a Calibration (from calibrate or "
            "calibration_from_pairs)"
        )
    k = as_counts("observed_passes", observed_passes)
    n = as_counts("trials", trials)
    check_not_larger("observed_passes", k, "trials", n)
    if calibration.n_good == 0 or calibration.n_bad == 0:
        missing = "good" if calibration.n_good == 0 else "bad"
        raise InvalidArgument(
            f"the calibration has no {missing} answers, so the judge's "
            f"{'sensitivity' if missing == 'good' else 'specificity'} is unknown; "
            "calibrate on both good and bad answers before correcting a pass rate"
        )
    se = calibration.true_pass / calibration.n_good
    sp = calibration.true_fail / calibration.n_bad
    if se + sp <= 1:
        raise InvalidArgument(
            f"the judge is no better than chance: sensitivity {se:.3g} + specificity "
            f"{sp:.3g} = {se + sp:.3g} <= 1, so its verdicts carry no information "
            "about the true pass rate and cannot be corrected"
        )
    return k, n, se, sp


def _one_sided_words(level: float) -> str:
    return (
        f"the two-sided interval collapsed to a point after clipping, so the limit "
        f"given is the one-sided {_pct(level)} bound (Clopper-Pearson bounds of the "
        f"three samples, Bonferroni)"
    )


def _scalar_correction(
    k: int,
    n: int,
    se: float,
    sp: float,
    estimate: Any,
    low: Any,
    high: Any,
    widened: Any,
    at_zero: Any,
    collapsed: Any,
    note: str,
    level: float,
) -> Interval:
    """The interval of one count, its note saying what was clipped, widened or bounded."""
    method = "lang_reiczigel"
    if n == 0:
        note += "; no trials, nothing to estimate"
    else:
        raw = (k / n + sp - 1) / (se + sp - 1)
        if raw < 0 or raw > 1:
            note += f"; the raw estimate {raw:.3g} was clipped to [0, 1]"
        if widened:
            note += "; widened to contain the estimate (tiny calibration sample)"
        if bool(collapsed):
            method = "one_sided_bound"
            observed = _pct(k / n)
            if bool(at_zero):
                bound, side, edge = float(high), "at most", 0.0
                judge = f"it passes {_pct(1 - sp)} of bad answers"
                beyond = "even if no answer were good it would usually pass more"
            else:
                bound, side, edge = float(low), "at least", 1.0
                judge = f"it fails {_pct(1 - se)} of good answers"
                beyond = "even if every answer were good it would usually pass fewer"
            what = (
                f"{side} {_pct(bound)} (one-sided {_pct(level)}): the observed pass "
                f"rate {observed} is within the judge's error, since {judge}"
            )
            if bound == edge:
                what += (
                    f", and beyond it: {beyond}, so check that the calibration answers "
                    "are like these"
                )
            note = f"true pass rate {what}; {_one_sided_words(level)}; {note}"
    return Interval(float(estimate), float(low), float(high), level, method, note=note)


# --- calibration files ---------------------------------------------------------


class CalibrationFileError(EvalStatsError):
    """A calibration file that cannot be read; the message names the file, line and problem."""


_HUMAN_KEYS = ("human", "person")
_CHECK_KEYS = ("check", "judge")
_PASS_WORDS = frozenset({"pass", "passed", "true", "1", "yes"})
_FAIL_WORDS = frozenset({"fail", "failed", "false", "0", "no"})
_UNSCORED_WORDS = frozenset({"unscored"})
_WORDS = "pass/fail, passed/failed, true/false, 1/0"


def _verdict_word(value: Any, *, unscored_ok: bool) -> bool | None:
    """True/False for a verdict word; None for 'unscored'; KeyError if unknown."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _PASS_WORDS:
            return True
        if word in _FAIL_WORDS:
            return False
        if unscored_ok and word in _UNSCORED_WORDS:
            return None
    raise KeyError(value)


def _pick_key(keys: Iterable[str], wanted: tuple[str, ...]) -> tuple[str | None, str | None]:
    """The key among ``keys`` naming one of ``wanted`` (case-insensitive), or an error."""
    found = [k for k in keys if isinstance(k, str) and k.strip().lower() in wanted]
    if len(found) > 1:
        return None, f"both {found[0]!r} and {found[1]!r} columns; keep one"
    if not found:
        return None, None
    return found[0], None


class _Row(NamedTuple):
    line: int
    fields: dict[str, Any]


def _rows_csv(text: str, where: str) -> tuple[list[str], list[_Row]]:
    """The header and rows of a calibration CSV, separated by commas, semicolons or
    tabs (a spreadsheet's export in many languages uses semicolons)."""
    from .._text import csv_separator

    known = {*_HUMAN_KEYS, *_CHECK_KEYS, "answer"}
    sep = csv_separator(text, known)
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=sep)
    try:
        header = [h for h in (reader.fieldnames or [])]
        rows = []
        for record in reader:
            if None in record:
                raise CalibrationFileError(
                    f"{where}, line {reader.line_num}: more cells than the header has columns"
                )
            rows.append(_Row(reader.line_num, dict(record)))
    except csv.Error as exc:
        raise CalibrationFileError(
            f"{where}, line {reader.line_num}: not valid CSV ({exc})"
        ) from None
    return header, rows


def _rows_jsonl(text: str, where: str) -> tuple[list[str], list[_Row]]:
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CalibrationFileError(
                f"{where}, line {number}: not valid JSON ({exc.msg} at column {exc.colno})"
            ) from None
        if not isinstance(record, dict):
            raise CalibrationFileError(
                f"{where}, line {number}: expected a JSON object with 'human' and 'check' "
                f"verdicts, got {type(record).__name__}"
            )
        rows.append(_Row(number, record))
    return [], rows


def _looks_like_jsonl(path: Path, text: str) -> bool:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        return True
    if suffix in (".csv", ".txt"):
        return False
    return text.lstrip().startswith("{")


def read_calibration_file(path: str | Path) -> list[VerdictPair]:
    """Read paired verdicts, a person's and a check's, one answer per row.

    The file is CSV with a header row, or JSONL with one object per line
    (``.jsonl``, ``.ndjson``, ``.json``, or any file whose first character is
    ``{``). The person's verdict is in a column or key named ``human`` or
    ``person``; the check's in ``check`` or ``judge``; an optional ``answer``
    holds the answer. Verdict words are pass/fail, passed/failed, true/false,
    1/0 and yes/no, in any case (JSON booleans too); the check's verdict may
    also be ``unscored``.

    Returns
    -------
    list of VerdictPair
        One per row, with ``source`` set to ``file:line``.

    Raises
    ------
    CalibrationFileError
        One line naming the file, the line and the problem: a missing column,
        an unknown verdict word, bad JSON, or no rows at all.
    """
    path = Path(path)
    where = str(path)
    try:
        # A regular file, read whole within the cap: a FIFO or a device is refused.
        data = read_input(path, what="a calibration file", error=CalibrationFileError)
        text = data.decode("utf-8-sig")
    except IsADirectoryError:
        raise CalibrationFileError(f"{where}: is a folder, not a calibration file") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise CalibrationFileError(f"{where}: cannot read the file ({reason})") from None
    jsonl = _looks_like_jsonl(path, text)
    try:
        header, rows = _rows_jsonl(text, where) if jsonl else _rows_csv(text, where)
    except RecursionError:  # a row nested past the JSON parser
        raise CalibrationFileError(too_deep(where, "a calibration file")) from None
    if not jsonl:
        if not header:
            raise CalibrationFileError(
                f"{where}: the file is empty; expected a header with 'human' and 'check' "
                "columns and one row per answer"
            )
        for wanted, what in ((_HUMAN_KEYS, "the person's"), (_CHECK_KEYS, "the check's")):
            key, problem = _pick_key(header, wanted)
            if problem or key is None:
                raise CalibrationFileError(
                    f"{where}, line 1: "
                    + (
                        problem
                        or f"no column for {what} verdict (expected "
                        f"{' or '.join(repr(w) for w in wanted)}); the columns are "
                        f"{', '.join(repr(h) for h in header)}"
                    )
                )
    if not rows:
        raise CalibrationFileError(f"{where}: no rows; expected one row per judged answer")
    pairs = []
    for row in rows:
        fields = row.fields
        values: dict[str, Any] = {}
        for wanted, label in ((_HUMAN_KEYS, "human"), (_CHECK_KEYS, "check")):
            key, problem = _pick_key(fields, wanted)
            if problem:
                raise CalibrationFileError(f"{where}, line {row.line}: {problem}")
            if key is None or fields[key] is None or fields[key] == "":
                raise CalibrationFileError(
                    f"{where}, line {row.line}: no {label} verdict (expected "
                    f"{' or '.join(repr(w) for w in wanted)})"
                )
            try:
                values[label] = _verdict_word(fields[key], unscored_ok=label == "check")
            except KeyError:
                words = (
                    f"{_WORDS}, yes/no or unscored" if label == "check" else (f"{_WORDS} or yes/no")
                )
                raise CalibrationFileError(
                    f"{where}, line {row.line}: {key}={fields[key]!r} is not a verdict; use {words}"
                ) from None
        answer_key, _ = _pick_key(fields, ("answer",))
        answer = fields.get(answer_key, "") if answer_key else ""
        pairs.append(
            VerdictPair(
                human=bool(values["human"]),
                check=values["check"],
                answer="" if answer is None else str(answer),
                source=f"{where}:{row.line}",
            )
        )
    return pairs


# --- the report the command prints ---------------------------------------------


@dataclass(frozen=True)
class CalibrationReport:
    """A calibration read from a file, and optionally a pass rate corrected with it."""

    calibration: Calibration
    source: str = ""
    observed_passes: int | None = None
    trials: int | None = None
    corrected: Interval | None = None
    naive: Interval | None = None
    level: float = field(default=0.95)

    def __str__(self) -> str:
        lines = [f"calibration file {self.source}"] if self.source else []
        lines.append(str(self.calibration))
        if self.corrected is not None and self.naive is not None:
            lines += [
                "",
                f"pass rate the check reported: {self.observed_passes} of {self.trials}",
                f"  as reported (Wilson)             {self.naive}",
                f"  corrected for the check's errors {self.corrected}"
                "  (Rogan-Gladen, Lang & Reiczigel interval)",
            ]
            if self.corrected.method == "one_sided_bound":
                lines.append(f"  {self.corrected.note.split(';')[0]}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source, "calibration": self.calibration.to_dict()}
        if self.corrected is not None and self.naive is not None:
            out["observed"] = {"passes": self.observed_passes, "trials": self.trials}
            out["naive"] = self.naive.to_dict()
            out["corrected"] = self.corrected.to_dict()
        return out


def _parse_observed(observed: str | tuple[int, int]) -> tuple[int, int]:
    if isinstance(observed, tuple):
        k, n = observed
    else:
        match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(observed))
        if match is None:
            raise InvalidArgument(
                f"observed={observed!r} must be K/N: passes out of trials, for example 42/60"
            )
        k, n = int(match.group(1)), int(match.group(2))
    try:
        k_arr, n_arr = as_counts("passes", k), as_counts("trials", n, minimum=1)
        check_not_larger("passes", k_arr, "trials", n_arr)
    except InvalidArgument as problem:  # say which argument: K/N is one value
        shown = observed if isinstance(observed, str) else f"{k}/{n}"
        raise InvalidArgument(f"observed={shown!r} (K/N): {problem}") from None
    return int(k_arr), int(n_arr)


def calibrate_file(
    path: str | Path,
    *,
    observed: str | tuple[int, int] | None = None,
    level: float = 0.95,
    min_sensitivity: float = DEFAULT_MIN_SENSITIVITY,
    min_specificity: float = DEFAULT_MIN_SPECIFICITY,
) -> CalibrationReport:
    """Calibrate a check from a file of paired verdicts; optionally correct a pass rate.

    Parameters
    ----------
    path : str or Path
        A CSV or JSONL file as read by :func:`read_calibration_file`.
    observed : str or (int, int), optional
        A pass rate the check reported, as ``"K/N"`` or ``(K, N)``; if given,
        the report adds it corrected for the check's errors
        (:func:`corrected_pass_rate`) next to the uncorrected Wilson interval.
    level : float, optional
        Confidence level (0.95).
    min_sensitivity, min_specificity : float, optional
        The rule of ``passed calibration`` (see :func:`calibrate`).
    """
    level = check_level(level)
    rule = _rule(min_sensitivity, min_specificity)
    parsed = _parse_observed(observed) if observed is not None else None
    calibration = calibration_from_pairs(read_calibration_file(path), level=level, **rule)
    if parsed is None:
        return CalibrationReport(calibration, source=str(path), level=level)
    k, n = parsed
    from ..stats._intervals import proportion_ci

    return CalibrationReport(
        calibration,
        source=str(path),
        observed_passes=k,
        trials=n,
        corrected=corrected_pass_rate(k, n, calibration, level=level),
        naive=proportion_ci(k, n, level=level, method="wilson"),
        level=level,
    )
