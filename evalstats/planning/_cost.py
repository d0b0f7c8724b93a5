"""What a run cost: token counts priced per million tokens.

Prices are dollars per million tokens, input and output apart, as model
services list them. A variant may carry its own (``price_in=0.15,price_out=0.6``
in its spec, recorded in the manifest); a prices file maps model names to
``{input: ..., output: ...}``; a variant's own prices win over the file.

A sample's cost is ``input * price_in / 1e6 + output * price_out / 1e6``
from the ``tokens`` its record carries; a run that used the providers' batch
APIs (``run --batch``, recorded in its manifest) at the batch price: the one a
prices file gives for the model (``batch_input``/``batch_output``, or a
``batch`` share of the listed price), else half the listed price. A
sample whose record has no token counts (a task that does not report them, an
unmeasured call that never got an answer) has no cost: it is counted apart and
said, never taken as zero.

The calls of a run's judged checks are priced beside the assistant's, from the
``judge_tokens`` each judged verdict records, by its ``judge_model`` in the prices
file (at the batch price when the run sent the judge's calls in batches,
``batch.judge`` in its manifest). A judged verdict without them (a file written
before they were recorded, a judge whose service reports no usage) is a call of
unknown cost, said as such; a judge model the prices file lacks is said in one line.
Each variant's cost carries the judge calls that scored its answers (the variant
its sample record names), so that a variant's whole is its assistant's calls and
its judge's; the variants' judge parts add up to the run's judge calls.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from .._files import open_input, read_input, too_deep
from ..errors import InvalidArgument, ResultsFileError
from ..results._records import CheckVerdict, Sample, Tokens, derived
from ..running._prices import BATCH_DISCOUNT, Prices, _price

__all__ = [
    "BATCH_DISCOUNT",
    "CostSummary",
    "DesignCost",
    "JudgeCost",
    "Prices",
    "VariantCost",
    "cost_summary",
    "design_cost",
    "has_prices",
    "judge_calls",
    "judge_calls_by_variant",
    "judge_calls_per_sample",
    "load_prices",
    "priced_variants",
    "sample_cost",
]

#: Characters per token when a count has to be estimated from text (the usual
#: rule of thumb for English with GPT tokenizers; OpenAI, "What are tokens and
#: how to count them").
CHARS_PER_TOKEN = 4


#: The most a prices file may hold (a table of a few hundred models is a few KiB).
_PRICES_LIMIT = 4 << 20


def load_prices(path: str | Path) -> dict[str, Prices]:
    """A prices file: a YAML (or JSON) mapping of model name to ``{input, output}``.

    Both prices are dollars per million tokens, as in::

        gpt-4o-mini: {input: 0.15, output: 0.60}
        claude-3-5-haiku-latest: {input: 0.80, output: 4.00}

    A model's batch price (what its provider's batch API bills, for a run with
    ``--batch``) is either ``batch_input`` and ``batch_output`` in dollars per
    million tokens, or ``batch``, the share of the listed prices (0 to 1)::

        gpt-4o-mini: {input: 0.15, output: 0.60, batch_input: 0.075, batch_output: 0.30}
        claude-3-5-haiku-latest: {input: 0.80, output: 4.00, batch: 0.5}

    Without either, a batch costs half the listed price (:data:`BATCH_DISCOUNT`).

    Anything else (a missing or unknown key, a negative or non-numeric price,
    a batch share outside 0 to 1, ``batch`` beside ``batch_input``, a file that
    is not such a mapping) is refused with an
    :class:`~evalstats.errors.InvalidArgument` naming ``prices=PATH``.
    """
    import yaml

    where = f"prices={str(path)!r}"
    try:
        # A regular file, read whole within the cap: a FIFO or a device is refused.
        text = read_input(path, what="a prices file", limit=_PRICES_LIMIT).decode("utf-8")
    except InvalidArgument as exc:
        raise InvalidArgument(f"prices={exc}") from None
    except IsADirectoryError:
        raise InvalidArgument(f"{where}: is a folder; give a prices YAML file") from None
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or str(exc)
        raise InvalidArgument(f"{where}: cannot be read: {why}") from None
    try:
        # libyaml's loader where there is one: it stops at 1000 levels of nesting
        # with an error, where the pure-Python one recurses.
        document = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise InvalidArgument(f"{where}: not valid YAML{at}") from None
    except RecursionError:
        raise InvalidArgument(too_deep(where, "a prices file")) from None
    except (ValueError, OverflowError) as exc:
        # A value YAML cannot build: an impossible date (2024-02-30), an integer
        # of thousands of digits.
        why = str(exc).split(";")[0]
        raise InvalidArgument(f"{where}: a value cannot be read ({why})") from None
    if not isinstance(document, Mapping) or not document:
        raise InvalidArgument(
            f"{where}: expected a mapping of model name to {{input: ..., output: ...}} "
            "(dollars per million tokens)"
        )
    out: dict[str, Prices] = {}
    for model, entry in document.items():
        if not isinstance(model, str) or not model.strip():
            raise InvalidArgument(f"{where}: model name {model!r} must be a non-empty string")
        if not isinstance(entry, Mapping):
            raise InvalidArgument(
                f"{where}: {model}={entry!r} must be a mapping {{input: ..., output: ...}}"
            )
        unknown = sorted(str(k) for k in entry if k not in _PRICE_KEYS)
        if unknown:
            raise InvalidArgument(
                f"{where}: {model} has unknown key {unknown[0]!r}; keys are input, output "
                "(dollars per million tokens), and for the batch API batch_input and "
                "batch_output, or batch (a share of the listed price)"
            )
        missing = [k for k in ("input", "output") if k not in entry]
        if missing:
            raise InvalidArgument(f"{where}: {model} lacks {missing[0]}")
        try:
            out[model] = _entry_prices(model, entry)
        except InvalidArgument as exc:
            raise InvalidArgument(f"{where}: {exc}") from None
    return out


#: The keys of one model's entry in a prices file.
_PRICE_KEYS = ("input", "output", "batch_input", "batch_output", "batch")


def _entry_prices(model: str, entry: Mapping[str, Any]) -> Prices:
    """One model's entry of a prices file, its batch price included when given."""
    listed_in = _price(f"{model}.input", entry["input"])
    listed_out = _price(f"{model}.output", entry["output"])
    if "batch" in entry:
        if "batch_input" in entry or "batch_output" in entry:
            raise InvalidArgument(
                f"{model}.batch goes without batch_input and batch_output: give the batch "
                "API's share of the listed price, or its prices, not both"
            )
        share = _batch_share(f"{model}.batch", entry["batch"])
        return Prices(listed_in, listed_out, listed_in * share, listed_out * share)
    given = [k for k in ("batch_input", "batch_output") if k in entry]
    if len(given) == 1:
        lacking = "batch_output" if given[0] == "batch_input" else "batch_input"
        raise InvalidArgument(f"{model}.{given[0]} goes with {model}.{lacking}: give both")
    if not given:
        return Prices(listed_in, listed_out)
    return Prices(
        listed_in,
        listed_out,
        _price(f"{model}.batch_input", entry["batch_input"]),
        _price(f"{model}.batch_output", entry["batch_output"]),
    )


def _batch_share(name: str, value: Any) -> float:
    """``value`` as the share of the listed price a batch API bills: 0 to 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidArgument(
            f"{name}={value!r} must be a number from 0 to 1 (the batch API's share of the "
            "listed price, such as 0.5)"
        )
    if not math.isfinite(value) or not 0 <= value <= 1:
        raise InvalidArgument(
            f"{name}={value!r} must be from 0 to 1 (the batch API's share of the listed "
            "price, such as 0.5)"
        )
    return float(value)


def priced_variants(
    variants: Iterable[Any], prices: Mapping[str, Prices] | str | Path
) -> list[Any]:
    """The variants (objects or ``NAME=TASK`` strings), each without prices of its
    own given those of its model in ``prices`` (a mapping or a prices file).

    What ``evalstats run --prices`` does: the prices land in the manifest's
    variant description; a variant's own ``price_in``/``price_out`` win.
    """
    import dataclasses

    from ..running._engine import Variant, parse_variant

    table = load_prices(prices) if isinstance(prices, (str, Path)) else dict(prices)
    out = []
    for v in variants:
        variant = parse_variant(v) if isinstance(v, str) else v
        if isinstance(variant, Variant) and variant.price_in is None:
            model = variant.task.describe().get("model")
            if isinstance(model, str) and model in table:
                found = table[model]
                variant = dataclasses.replace(variant, price_in=found.input, price_out=found.output)
        out.append(variant)
    return out


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def sample_tokens(record: Mapping[str, Any]) -> tuple[int, int] | None:
    """``(input, output)`` token counts a sample record carries, or None when it
    lacks either."""
    tokens = record.get("tokens")
    if not isinstance(tokens, Mapping):
        return None
    n_in, n_out = _count(tokens.get("input")), _count(tokens.get("output"))
    if n_in is None or n_out is None:
        return None
    return n_in, n_out


def estimated_tokens(record: Mapping[str, Any]) -> tuple[int, int]:
    """``(input, output)`` estimated from the record's prompt and answer text,
    one token per :data:`CHARS_PER_TOKEN` characters, rounded up."""
    prompt = record.get("prompt") or {}
    texts = [prompt.get("system") or ""] if isinstance(prompt, Mapping) else []
    messages = prompt.get("messages") if isinstance(prompt, Mapping) else None
    for m in messages or ():
        if isinstance(m, Mapping) and isinstance(m.get("content"), str):
            texts.append(m["content"])
    answer = record.get("answer")
    n_in = sum(math.ceil(len(t) / CHARS_PER_TOKEN) for t in texts)
    n_out = math.ceil(len(answer) / CHARS_PER_TOKEN) if isinstance(answer, str) else 0
    return n_in, n_out


def sample_cost(record: Mapping[str, Any], prices: Prices) -> float | None:
    """Dollars a sample cost at ``prices``, from its recorded ``tokens``; None
    when the record has no token counts (never 0 for "unknown").

    Examples
    --------
    >>> sample_cost({"tokens": {"input": 2000, "output": 1000}}, Prices(0.15, 0.6))
    0.0009
    >>> print(sample_cost({"tokens": None}, Prices(0.15, 0.6)))
    None
    """
    tokens = sample_tokens(record)
    return None if tokens is None else prices.cost(*tokens)


@dataclass(frozen=True)
class VariantCost:
    """The cost of one variant's samples.

    ``total`` sums the samples with token counts (``priced`` of them);
    ``no_tokens`` samples report none and are not in it. ``per_sample`` is
    ``total / priced``; ``per_measured_sample`` is ``total`` over the measured
    samples (what one usable measurement cost, unmeasured calls' tokens
    included), None while some samples report no tokens. All are None when
    the variant has no price.

    ``judges``, in a run with judged calls (None in others): the calls that
    judged this variant's answers, one :class:`JudgeCost` per judge model (empty
    when none of its answers was judged by a model). ``judge_total`` is their
    cost, summing the calls with a price and token counts as the run's total
    does; ``total_with_judge`` is the variant's whole, ``total + judge_total``,
    None when either is unknown.
    """

    variant: str
    model: str | None
    prices: Prices | None
    price_source: str | None
    samples: int
    measured: int
    priced: int
    no_tokens: int
    input_tokens: int
    output_tokens: int
    total: float | None
    per_sample: float | None
    per_measured_sample: float | None
    estimated: bool = False
    judges: tuple[JudgeCost, ...] | None = None

    @property
    def judge_total(self) -> float | None:
        """What this variant's judge calls with a price and token counts cost: 0 when
        none was made, None when none is known or the run has no judged calls."""
        if self.judges is None:
            return None
        return _judges_total(self.judges) if self.judges else 0.0

    @property
    def total_with_judge(self) -> float | None:
        """The variant's assistant calls and judge calls, ``total + judge_total``: None
        when either part is unknown or the run has no judged calls."""
        if self.total is None or self.judge_total is None:
            return None
        return self.total + self.judge_total

    def to_dict(self) -> dict[str, Any]:
        out = self._assistant_dict()
        # only in runs with judged calls, so that other runs' documents stay as they were
        if self.judges is not None:
            out["judges"] = [j.to_dict() for j in self.judges]
            out["judge_total"] = self.judge_total
            out["total_with_judge"] = self.total_with_judge
        return out

    def judge_lines(self) -> list[str]:
        """The report's line of this variant's whole: its assistant calls and the judge
        calls that scored its answers.

        No line in a run without judged calls, nor when every judge of its calls
        lacks a price: the judge's own line says that once for the run. A part that is
        unknown (no price, no token counts) makes the whole unknown and is said,
        never taken as zero; a part known but for some calls is summed without them,
        as the run's total is, and says so.
        """
        judges = self.judges
        if judges is None or (judges and all(j.priced and j.total is None for j in judges)):
            return []
        whole, judged = self.total_with_judge, self.judge_total
        if whole is None:
            why = []
            if self.total is not None:
                why.append(f"{_dollars(self.total)} the assistant's")
            elif self.prices is None:
                why.append(f"no price for model {self.model or '?'}")
            else:
                why.append("no sample reports tokens")
            if judged is not None:
                gaps = _judge_gaps(judges)
                without = f", without {', '.join(gaps)}" if gaps else ""
                why.append(f"{_dollars(judged)} the judge's{without}")
            else:
                for j in judges:
                    if not j.priced:
                        why.append(f"{j.calls} judge calls report no tokens")
                    else:  # calls with tokens, to a judge without a price
                        why.append(f"no price for the judge {j.model or '?'}")
            return [f"    with the judge: unknown ({'; '.join(why)})"]
        if judges:
            calls = sum(j.priced for j in judges if j.total is not None)
            split = (
                f" ({_dollars(self.total)} the assistant's, {_dollars(judged)} the judge's "
                f"for {calls} calls)"
            )
        else:
            split = " (no judge calls)"
        rest = [f"{self.no_tokens} samples that report no tokens"] if self.no_tokens else []
        rest += _judge_gaps(judges)
        without = f", without {'; '.join(rest)}" if rest else ""
        return [f"    with the judge: {_dollars(whole)}{split}{without}"]

    def _assistant_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "model": self.model,
            "prices": None if self.prices is None else self.prices.to_dict(),
            "price_source": self.price_source,
            "samples": self.samples,
            "measured": self.measured,
            "priced": self.priced,
            "no_tokens": self.no_tokens,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total": self.total,
            "per_sample": self.per_sample,
            "per_measured_sample": self.per_measured_sample,
            "estimated": self.estimated,
        }


def _judge_gaps(judges: Iterable[JudgeCost]) -> list[str]:
    """What a sum of these judge calls' cost leaves out, as the report says it."""
    out = []
    for j in judges:
        if j.priced and j.total is None:
            out.append(f"the judge {j.model or ''}".rstrip() + " (no price)")
        elif j.no_tokens:
            out.append(f"{j.no_tokens} judge calls that report no tokens")
    return out


def _dollars(x: float | None) -> str:
    if x is None:
        return "?"
    if x == 0:
        return "$0"
    if abs(x) >= 0.01:
        return f"${x:,.2f}"
    if abs(x) < 1e-9:
        return f"${x:.1e}"
    # two significant digits, written out: $0.00048, not $4.8e-04
    digits = 1 - math.floor(math.log10(abs(x)))
    return "$" + f"{x:.{digits}f}".rstrip("0").rstrip(".")


@dataclass(frozen=True)
class JudgeCost:
    """The cost of a run's judge calls to one model (a judged check's calls): all
    of them, or those that judged one variant's answers.

    ``calls`` counts the judged verdicts whose judge was asked (their records
    keep its prompt and reply, or its tokens); ``priced`` of them report both
    token counts and are in ``total``; the others' cost is unknown (a file
    written before judge tokens were recorded, a judge that does not report
    usage), never taken as zero. ``batch``: the judge's calls went through
    its provider's batch API, and are priced at its batch price.
    """

    model: str | None
    prices: Prices | None
    price_source: str | None
    calls: int
    priced: int
    input_tokens: int
    output_tokens: int
    total: float | None
    batch: bool = False

    @property
    def no_tokens(self) -> int:
        """The calls that report no tokens."""
        return self.calls - self.priced

    @property
    def per_call(self) -> float | None:
        return None if self.total is None else self.total / self.priced

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "prices": None if self.prices is None else self.prices.to_dict(),
            "price_source": self.price_source,
            "calls": self.calls,
            "priced": self.priced,
            "no_tokens": self.no_tokens,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total": self.total,
            "per_call": self.per_call,
            "batch": self.batch,
        }

    def lines(self) -> list[str]:
        """The report's lines of these calls."""
        name = f"judge {self.model}" if self.model else "judge"
        if not self.priced:
            return [
                f"  {name}: unknown ({self.calls} judge calls report no tokens: a file written "
                "before judge tokens were recorded, or a judge that does not report usage)"
            ]
        if self.prices is None or self.total is None:
            return [
                f"  {name}: no price for model {self.model or '?'} ({self.calls} judge calls; "
                "give it in --prices FILE)"
            ]
        out = [
            f"  {name}: {_dollars(self.total)} for {self.priced} judge calls "
            f"({_dollars(self.per_call)} per call; ${self.prices.input:g} in, "
            f"${self.prices.output:g} out per million tokens"
            f"{', from ' + self.price_source if self.price_source else ''})"
        ]
        if self.no_tokens:
            out.append(
                f"    {self.no_tokens} judge calls report no tokens: not in the total "
                "(their cost is unknown)"
            )
        return out


@dataclass(frozen=True)
class CostSummary:
    """Cost per variant and for the run (prices in dollars per million tokens).

    ``total`` sums the variants that have a price (``unpriced`` names the
    others); ``no_tokens`` counts samples of priced variants without token
    counts, which no total includes. ``estimated`` is True when token counts
    were estimated from text rather than reported by the model service.
    ``judges`` are the calls of the run's judged checks, one per judge model
    (empty when no verdict was judged by a model); ``total`` includes those
    with a price and token counts, ``judge_total`` is their part of it.
    ``listed`` names the models the prices given (a prices file) price, so that
    a variant whose model they miss can say which they name.
    """

    variants: tuple[VariantCost, ...]
    total: float | None
    no_tokens: int
    unpriced: tuple[str, ...]
    estimated: bool = False
    judges: tuple[JudgeCost, ...] = ()
    listed: tuple[str, ...] = ()

    @property
    def judge_total(self) -> float | None:
        """What the judge calls with a price and token counts cost, or None."""
        return _judges_total(self.judges)

    @property
    def known(self) -> bool:
        """Whether any variant has a price."""
        return any(v.prices is not None for v in self.variants)

    def _hint(self) -> str:
        """How a variant without a price gets one: the prices given name other models."""
        if not self.listed:
            return "give price_in= and price_out= in the variant, or --prices FILE"
        names = ", ".join(self.listed[:6]) + (", ..." if len(self.listed) > 6 else "")
        return f"the prices given are for {names} only"

    def to_dict(self) -> dict[str, Any]:
        return {
            "currency": "USD",
            "unit": "per million tokens",
            "total": self.total,
            "no_tokens": self.no_tokens,
            "unpriced": list(self.unpriced),
            "estimated": self.estimated,
            "variants": [v.to_dict() for v in self.variants],
            # only for runs with judged calls, so that other runs' documents stay as they were
            **(
                {"judges": [j.to_dict() for j in self.judges], "judge_total": self.judge_total}
                if self.judges
                else {}
            ),
        }

    def lines(self) -> list[str]:
        """The text block a report prints."""
        how = " (estimated from text at 4 characters a token)" if self.estimated else ""
        out = [f"cost{how}"]
        for v in self.variants:
            if v.prices is None:
                out.append(f"  {v.variant}: no price for model {v.model or '?'} ({self._hint()})")
                out.extend(v.judge_lines())
                continue
            measured = (
                f", {_dollars(v.per_measured_sample)} per measured sample"
                if v.per_measured_sample is not None
                else ""
            )
            if v.total is None:
                out.append(
                    f"  {v.variant}: unknown (${v.prices.input:g} in, ${v.prices.output:g} "
                    "out per million tokens, but no sample reports tokens)"
                )
            else:
                out.append(
                    f"  {v.variant}: {_dollars(v.total)} for {v.priced} samples "
                    f"({_dollars(v.per_sample)} per sample{measured}; "
                    f"${v.prices.input:g} in, ${v.prices.output:g} out per million tokens"
                    f"{', from ' + v.price_source if v.price_source else ''})"
                )
            if v.no_tokens:
                out.append(
                    f"    {v.no_tokens} samples report no tokens: not in the total "
                    "(their cost is unknown)"
                )
            out.extend(v.judge_lines())
        for j in self.judges:
            out.extend(j.lines())
        if self.total is None:
            out.append("  run: unknown (no priced sample reports tokens)")
        else:
            rest = [f"{', '.join(self.unpriced)} (no price)"] if self.unpriced else []
            if self.no_tokens:
                rest.append(f"{self.no_tokens} samples that report no tokens")
            rest += _judge_gaps(self.judges)
            judged = self.judge_total
            parts = (
                f" ({_dollars(self.total - judged)} the assistant's, {_dollars(judged)} "
                "the judge's)"
                if judged is not None
                else ""
            )
            out.append(
                f"  run: {_dollars(self.total)}{parts}"
                + (f", without {'; '.join(rest)}" if rest else "")
            )
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


def has_prices(manifest: Mapping[str, Any]) -> bool:
    """Whether some variant in ``manifest`` carries prices of its own."""
    listed = manifest.get("variants") if isinstance(manifest, Mapping) else None
    return any(_manifest_prices(v) is not None for v in listed or ())


def _manifest_prices(description: Any) -> Prices | None:
    prices = description.get("prices") if isinstance(description, Mapping) else None
    if not isinstance(prices, Mapping):
        return None
    try:
        return Prices(prices.get("input"), prices.get("output"))  # type: ignore[arg-type]
    except InvalidArgument:
        return None


def cost_summary(
    results: Any,
    *,
    prices: Mapping[str, Prices] | str | Path | None = None,
    default: Prices | None = None,
    estimate: bool = False,
) -> CostSummary:
    """Cost of a run per variant and in total.

    Parameters
    ----------
    results : RunSource, Results, Tally or path
        A run (:class:`~evalstats.reading._source.RunSource`), a results file,
        what :func:`evalstats.results._file.read_results` returned, or its
        :func:`~evalstats.reading._source.tally`.
    prices : mapping or path, optional
        Model name to :class:`Prices`, or a prices file (:func:`load_prices`).
        A variant's own prices (recorded in the manifest) win.
    default : Prices, optional
        Prices for every variant that has none of its own or from ``prices``.
    estimate : bool
        Estimate token counts from each sample's prompt and answer text (4
        characters a token) where the record has none; the summary says so.
        This reads every sample's text; without it the token counts are those
        the streaming tally (:mod:`evalstats.reading._tally`) keeps, one pass over the
        file, the first record of a slot counting as everywhere else.
    """
    if isinstance(prices, (str, Path)):
        table = load_prices(prices)
    elif prices is None or isinstance(prices, Mapping):
        table = dict(prices or {})
        for model, price in table.items():
            if not isinstance(price, Prices):
                raise InvalidArgument(
                    f"prices[{model!r}]={price!r} must be a Prices (dollars per million tokens, "
                    "input and output)"
                )
    else:
        raise InvalidArgument(
            f"prices={prices!r} must be a prices file or a mapping of model name to Prices"
        )
    from ..reading._source import RunSource

    source = RunSource.of(results)
    if estimate:
        res = source.results(need="estimate=True reads each sample's text")
        manifest, names = res.manifest, res.variants()
        counted = {name: _count_records(res.samples, name) for name in names}
    else:
        t = source.tally()
        manifest, names = t.manifest, t.variants()
        counted = {name: _count_tally(t, name) for name in names}
    summary = _summary(manifest, names, counted, table, default)
    judged = judge_calls_by_variant(source, names)
    if not judged:
        return summary
    judges, by_variant = _judge_costs(manifest, judged, table, default)
    variants = tuple(
        dataclasses.replace(v, judges=tuple(by_variant.get(v.variant, ())))
        for v in summary.variants
    )
    known = [v.total for v in summary.variants if v.prices is not None and v.total is not None]
    known += [j.total for j in judges if j.total is not None]
    return dataclasses.replace(
        summary, variants=variants, total=math.fsum(known) if known else None, judges=tuple(judges)
    )


# --- the judge's calls ----------------------------------------------------------------

#: A judged verdict as the judge's cost reads it: whether its judge was asked (its
#: evidence, kept undecoded), the tokens that took and the model it asked.
_JudgedCheck = derived(
    "_JudgedCheck",
    CheckVerdict,
    ("judge", "judge_tokens", "judge_model"),
    {
        "judge": (msgspec.Raw | UnsetType, UNSET),
        "judge_tokens": (msgspec.Raw | UnsetType, UNSET),
        "judge_model": (Any, UNSET),
    },
    gc=False,
)
_JudgedSample = derived(
    "_JudgedSample", Sample, ("variant", "checks"), {"checks": list[_JudgedCheck]}, gc=False
)
_JUDGED_LINE = msgspec.json.Decoder(_JudgedSample)
_TOKENS = msgspec.json.Decoder(Tokens)


def judge_calls(source: Any, variants: Iterable[str] | None = None) -> dict[str | None, list[int]]:
    """The calls of a run's judged checks, by judge model: ``[calls, priced, input
    tokens, output tokens]`` (``priced``: the calls reporting both counts).

    Every judged verdict of the run's sample records (of ``variants``, when given)
    whose judge was asked counts: its record keeps the judge's prompt and reply
    (``judge``), or its ``judge_tokens`` or ``judge_model``. A judged check that was
    not asked (an empty answer) and a judge that gave no verdict after retries make
    no call here. The model is the verdict's ``judge_model``, else the manifest's
    judge's (None when neither says). A results file is read line by line, each
    line decoded only when it names a judge and then only for these fields; a run
    in memory as counts alone (no file, no records) has none to count.
    :func:`judge_calls_by_variant` gives the same counts split by variant.
    """
    out: dict[str | None, list[int]] = {}
    for model, split in judge_calls_by_variant(source, variants).items():
        out[model] = _summed(split.values())
    return out


def judge_calls_by_variant(
    source: Any, variants: Iterable[str] | None = None
) -> dict[str | None, dict[str | None, list[int]]]:
    """The counts of :func:`judge_calls`, by judge model and then by the variant
    whose answers the calls judged (the variant its sample record names).

    One pass over the records, as :func:`judge_calls` describes; a model's
    variants come in the order their first judged call is met, and each
    model's split adds up to its :func:`judge_calls` counts.
    """
    from ..reading._source import RunSource

    source = RunSource.of(source)
    wanted = None if variants is None else set(variants)
    out: dict[str | None, dict[str | None, list[int]]] = {}
    # Records already read (a subset, a log read by its reader) are counted as read;
    # else a file is streamed, without the records the tally did not keep.
    loaded, path = source.loaded, source.results_file
    if loaded is not None:
        records: Iterable[Any] = loaded.samples
    elif path is not None:
        records = _judged_lines(path)
    else:  # counts alone, or a table (no check of a table is judged)
        return out
    for record in records:
        _add_judged(out, record, wanted)
    if out:
        fallback = _manifest_judge_model(source.tally().manifest)
        if fallback is not None and None in out:
            into = out.setdefault(fallback, {})
            for variant, counts in out.pop(None).items():
                into[variant] = _summed([into.get(variant, [0, 0, 0, 0]), counts])
    return out


def _judged_lines(path: Any) -> Iterable[Any]:
    """The sample records of a results file that name a judge, as ``_JudgedSample``."""
    try:
        f = open_input(path, what="a results file", error=ResultsFileError)
    except (OSError, ResultsFileError):
        return  # the tally, which read it first, has said what is wrong
    with f:
        for line in f:
            if b'"judge' not in line:
                continue
            try:
                yield _JUDGED_LINE.decode(line)
            except (msgspec.DecodeError, msgspec.ValidationError):
                continue  # another record, or a line cut short: the tally has said so


def _add_judged(
    out: dict[str | None, dict[str | None, list[int]]], record: Any, wanted: set[str] | None
) -> None:
    """Count one sample record's judged calls (a ``_JudgedSample`` or a mapping), under
    their judge model and the record's variant."""
    if isinstance(record, Mapping):
        variant, checks = record.get("variant"), record.get("checks")
    else:
        variant, checks = record.variant, record.checks
    if wanted is not None and variant not in wanted:
        return
    for check in checks if isinstance(checks, list) else ():
        if isinstance(check, Mapping):
            evidence = check.get("judge", UNSET)
            tokens, model = check.get("judge_tokens", UNSET), check.get("judge_model", UNSET)
            tokens = _tokens_of(tokens) if tokens is not UNSET else UNSET
        elif isinstance(check, _JudgedCheck):
            evidence, tokens, model = check.judge, UNSET, check.judge_model
            if check.judge_tokens is not UNSET:
                tokens = _tokens_of(check.judge_tokens)
            evidence = evidence if evidence is UNSET or bytes(evidence) != b"null" else UNSET
        else:
            continue
        if evidence is UNSET and tokens is UNSET and model is UNSET:
            continue  # not a judged check, or one whose judge was not asked
        by_variant = out.setdefault(model if isinstance(model, str) and model else None, {})
        counts = by_variant.setdefault(variant if isinstance(variant, str) else None, [0, 0, 0, 0])
        counts[0] += 1
        if isinstance(tokens, tuple):
            counts[1] += 1
            counts[2] += tokens[0]
            counts[3] += tokens[1]


def _tokens_of(value: Any) -> tuple[int, int] | None:
    """``(input, output)`` of a judge call's ``judge_tokens`` (JSON text or a mapping),
    or None when it lacks either."""
    if isinstance(value, msgspec.Raw):
        try:
            value = _TOKENS.decode(value)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
        value = {"input": value.input, "output": value.output}
    return sample_tokens({"tokens": value})


def _manifest_judge_model(manifest: Mapping[str, Any]) -> str | None:
    """The model of the judge a manifest records (``run --judge``), if it names one."""
    judge = manifest.get("judge") if isinstance(manifest, Mapping) else None
    model = judge.get("model") if isinstance(judge, Mapping) else None
    return model if isinstance(model, str) and model else None


def _judge_costs(
    manifest: Mapping[str, Any],
    judged: Mapping[str | None, Mapping[str | None, list[int]]],
    table: Mapping[str, Prices],
    default: Prices | None,
) -> tuple[list[JudgeCost], dict[str | None, list[JudgeCost]]]:
    """Each judge model's calls priced, for the run and for each variant they judged:
    by the prices file (or ``default``), at the batch price when the run sent the
    judge's calls in batches."""
    batch = manifest.get("batch")
    batched = isinstance(batch, Mapping) and isinstance(batch.get("judge"), Mapping)
    run: list[JudgeCost] = []
    by_variant: dict[str | None, list[JudgeCost]] = {}
    for model, split in judged.items():
        price, where = _priced(model, None, table, default, batch if batched else None)
        run.append(_judge_cost(model, price, where, _summed(split.values()), batched))
        for variant, counts in split.items():
            by_variant.setdefault(variant, []).append(
                _judge_cost(model, price, where, counts, batched)
            )
    return run, by_variant


def _judge_cost(
    model: str | None, price: Prices | None, where: str | None, counts: list[int], batch: bool
) -> JudgeCost:
    """``[calls, priced, input tokens, output tokens]`` of one judge model at ``price``."""
    calls, priced, n_in, n_out = counts
    total = price.cost(n_in, n_out) if price is not None and priced else None
    return JudgeCost(model, price, where, calls, priced, n_in, n_out, total, batch)


def _judges_total(judges: Iterable[JudgeCost]) -> float | None:
    """What the judge calls with a price and token counts cost, or None when none is known."""
    known = [j.total for j in judges if j.total is not None]
    return math.fsum(known) if known else None


def _summed(counts: Iterable[list[int]]) -> list[int]:
    """Counts ``[calls, priced, input tokens, output tokens]`` added up."""
    return [sum(column) for column in zip(*counts, strict=True)]


def _summary(
    manifest: Mapping[str, Any],
    names: Iterable[str],
    counted: Mapping[str, tuple[int, int, int, int, int, bool]],
    table: Mapping[str, Prices],
    default: Prices | None,
) -> CostSummary:
    described = {v.get("name"): v for v in manifest.get("variants") or () if isinstance(v, Mapping)}
    rows = []
    for name in names:
        desc = described.get(name, {})
        task = desc.get("task") if isinstance(desc, Mapping) else None
        model = task.get("model") if isinstance(task, Mapping) else None
        batch = manifest.get("batch")
        price, source = _priced(
            model,
            _manifest_prices(desc),
            table,
            default,
            batch if isinstance(batch, Mapping) else None,
        )
        rows.append(_variant_cost(name, model, price, source, *counted[name]))
    priced = [r for r in rows if r.prices is not None]
    known = [r.total for r in priced if r.total is not None]
    total = math.fsum(known) if known else None
    return CostSummary(
        tuple(rows),
        total,
        sum(r.no_tokens for r in priced),
        tuple(r.variant for r in rows if r.prices is None),
        any(r.estimated for r in rows),
        listed=tuple(table),
    )


def _priced(
    model: Any,
    own: Prices | None,
    table: Mapping[str, Prices],
    default: Prices | None,
    batch: Mapping[str, Any] | None,
) -> tuple[Prices | None, str | None]:
    """The price of ``model``'s calls and where it comes from: ``own`` (the run's
    manifest), else the prices file, else ``default`` (an example price), else
    none; at the batch price when the calls went in ``batch``."""
    price: Prices | None
    if own is not None:
        price, where = own, "the run's manifest"
    elif isinstance(model, str) and model in table:
        price, where = table[model], "the prices file"
    elif default is not None:
        price, where = default, "an example price"
    else:
        return None, None
    if batch is not None:
        recorded = _recorded_batch_price(batch, model)
        listed = table.get(model) if isinstance(model, str) else None
        price, where = _batch_price(price, where, listed, recorded)
    return price, where


def _recorded_batch_price(batch: Mapping[str, Any], model: Any) -> Prices | None:
    """The batch price a ``run --batch --prices`` manifest records for ``model``."""
    recorded = batch.get("prices")
    entry = (
        recorded.get(model) if isinstance(recorded, Mapping) and isinstance(model, str) else None
    )
    if not isinstance(entry, Mapping):
        return None
    try:
        return Prices(entry.get("input"), entry.get("output"))  # type: ignore[arg-type]
    except InvalidArgument:
        return None


def _batch_price(
    price: Prices, source: str | None, listed: Prices | None, recorded: Prices | None = None
) -> tuple[Prices, str]:
    """The price of a ``run --batch`` variant: the batch price the prices file
    gives for its model, else the one the run's manifest records for it, else the
    one its own prices state, else half of them."""
    if listed is not None and listed.has_batch:
        return listed.batched(), "the prices file's batch price"
    if recorded is not None:
        return recorded, "the run's manifest, its batch price"
    if price.has_batch:
        return price.batched(), f"{source}, its batch price"
    # The providers' batch APIs bill half the listed price.
    return price.batched(), f"{source}, at half for the batch API"


def _count_records(
    samples: Iterable[Mapping[str, Any]], name: str
) -> tuple[int, int, int, int, int, bool]:
    """``(samples, measured, priced, input tokens, output tokens, estimated)`` of one
    variant's records, estimating the tokens of a record without them from its text."""
    n = measured = priced = n_in = n_out = 0
    estimated = False
    for s in samples:
        if s.get("variant") != name:
            continue
        n += 1
        if s.get("status") != "unmeasured":
            measured += 1
        tokens = sample_tokens(s)
        if tokens is None:
            tokens, estimated = estimated_tokens(s), True
        priced += 1
        n_in += tokens[0]
        n_out += tokens[1]
    return n, measured, priced, n_in, n_out, estimated


def _count_tally(t: Any, name: str) -> tuple[int, int, int, int, int, bool]:
    """The same counts from a variant's tally: samples reporting both token counts."""
    c = t.counts(name)
    measured = c.completed + c.incomplete
    return measured + c.unmeasured, measured, c.priced, c.priced_in, c.priced_out, False


def _variant_cost(
    name: str,
    model: Any,
    price: Prices | None,
    source: str | None,
    n: int,
    measured: int,
    priced: int,
    n_in: int,
    n_out: int,
    estimated: bool,
) -> VariantCost:
    no_tokens = n - priced
    model = model if isinstance(model, str) else None
    if price is None:
        return VariantCost(
            name, model, None, None, n, measured, priced, no_tokens, n_in, n_out,
            None, None, None, estimated,
        )  # fmt: skip
    # No sample with token counts: the cost is unknown, not $0.
    total = price.cost(n_in, n_out) if priced else None
    return VariantCost(
        name,
        model,
        price,
        source,
        n,
        measured,
        priced,
        no_tokens,
        n_in,
        n_out,
        total,
        None if total is None else total / priced,
        total / measured if total is not None and measured and not no_tokens else None,
        estimated,
    )


@dataclass(frozen=True)
class DesignCost:
    """What a design of ``calls`` model calls costs at ``cost_per_call`` dollars each."""

    calls: int | None
    cost_per_call: float
    total: float | None
    #: Through a provider's batch API (``run --batch``): each call at half ``cost_per_call``,
    #: or at ``batch_cost_per_call`` when given.
    batch: bool = False
    batch_cost_per_call: float | None = None
    #: The judge calls a sample of the pilot made (its judged checks'), which
    #: ``cost_per_call`` does not include; None when the pilot made none (or there is none).
    judge_calls_per_sample: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "calls": self.calls,
            "cost_per_call": self.cost_per_call,
            "total": self.total,
        }
        if self.batch:
            out["batch"] = True
        if self.batch_cost_per_call is not None:
            out["batch_cost_per_call"] = self.batch_cost_per_call
        if self.judge_calls_per_sample is not None:
            out["judge_calls_per_sample"] = self.judge_calls_per_sample
            out["judge_calls_included"] = False
        return out

    def __str__(self) -> str:
        text = self._assistant()
        per = self.judge_calls_per_sample
        if per is None:
            return text
        more = f" (about {round(per * self.calls):,} in this design)" if self.calls else ""
        return (
            f"{text}\nJudge calls not included: the pilot's judged checks made {per:.3g} judge "
            f"calls a sample{more}; add what they cost a sample to --cost-per-call, or price "
            "a run's with report --prices."
        )

    def _assistant(self) -> str:
        """The cost of the assistant's calls."""
        if self.calls is None or self.total is None:
            return "Cost: unknown (the plan names no design of cases x repeats)"
        if self.batch_cost_per_call is not None:
            return (
                f"Cost: {self.calls} calls x {_dollars(self.batch_cost_per_call)} (the batch "
                f"price; {_dollars(self.cost_per_call)} listed) = {_dollars(self.total)}."
            )
        if self.batch:
            each = self.cost_per_call * BATCH_DISCOUNT
            return (
                f"Cost: {self.calls} calls x {_dollars(each)} (half of "
                f"{_dollars(self.cost_per_call)}, through a batch API) = {_dollars(self.total)}."
            )
        return (
            f"Cost: {self.calls} calls x {_dollars(self.cost_per_call)} = {_dollars(self.total)}."
        )


#: The most one model call may cost in a plan: more is a typo (1e308 printed "$inf").
MAX_COST_PER_CALL = 1_000.0


def design_cost(
    calls: int | None,
    cost_per_call: Any,
    *,
    batch: bool = False,
    batch_cost_per_call: Any = None,
) -> DesignCost:
    """The cost of ``calls`` model calls (cases x repeats x variants) at
    ``cost_per_call`` dollars each (half that with ``batch``: the calls go through
    a provider's batch API, as ``run --batch`` sends them; ``batch_cost_per_call``
    is what a call costs there when the provider bills other than half, and
    implies ``batch``).

    Examples
    --------
    >>> str(design_cost(2 * 40 * 5, 0.002))
    'Cost: 400 calls x $0.002 = $0.80.'
    >>> str(design_cost(2 * 40 * 5, 0.002, batch=True))
    'Cost: 400 calls x $0.001 (half of $0.002, through a batch API) = $0.40.'
    >>> str(design_cost(2 * 40 * 5, 0.002, batch_cost_per_call=0.0012))
    'Cost: 400 calls x $0.0012 (the batch price; $0.002 listed) = $0.48.'
    """
    c = _dollars_a_call("cost_per_call", cost_per_call)
    if batch_cost_per_call is not None:
        each = _dollars_a_call("batch_cost_per_call", batch_cost_per_call)
        return DesignCost(calls, c, None if calls is None else calls * each, True, each)
    each = c * BATCH_DISCOUNT if batch else c
    return DesignCost(calls, c, None if calls is None else calls * each, bool(batch))


def judge_calls_per_sample(source: Any) -> float | None:
    """The judge calls a measured sample of a run (a pilot) made, or None when it made
    none: what a plan's ``--cost-per-call`` leaves out."""
    from ..reading._source import RunSource

    source = RunSource.of(source)
    calls = sum(counts[0] for counts in judge_calls(source).values())
    if not calls:
        return None
    t = source.tally()
    measured = sum(t.counts(v).completed + t.counts(v).incomplete for v in t.variants())
    return calls / measured if measured else None


def _dollars_a_call(name: str, value: Any) -> float:
    """``value`` as the dollars one model call costs: finite, 0 to MAX_COST_PER_CALL."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidArgument(f"{name}={value!r} must be a number of dollars")
    if not math.isfinite(value) or value < 0:
        raise InvalidArgument(f"{name}={value!r} must be a finite number >= 0")
    if value > MAX_COST_PER_CALL:
        raise InvalidArgument(
            f"{name}={value!r} is more than ${MAX_COST_PER_CALL:,.0f} a call; "
            "give the dollars one model call costs (such as 0.002)"
        )
    return float(value)
