"""How fast are the built-in checks?

Runs a realistic mix of built-in checks (contains, avoids, word_count,
matches, is_json_with, has_terms) on 10,000 answers from the shop stand-in,
a tenth of them wrapped in JSON, and prints checks per second overall and per
check. The baseline, measured in the same run, is a plain ``in`` substring
loop doing the same number of checks on the same answers; the ratio says what
the readable names, empty-answer rule, case folding and word boundaries cost.
Asserts nothing about time.

Usage::

    python benchmarks/checks.py [--answers 10000] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import timeit
from collections.abc import Callable

from evalstats.demo._shop import make_assistant
from evalstats.running._checks import (
    avoids,
    contains,
    has_terms,
    is_json_with,
    matches,
    run_check,
    word_count,
)
from evalstats.running._run_cases import load_shop_cases


def answers_from_the_stand_in(n: int, seed: int) -> list[str]:
    prompts = [case.prompt for case in load_shop_cases()]
    assistant = make_assistant(1, seed=seed)
    out = []
    for i in range(n):
        answer = assistant(prompts[i % len(prompts)])
        if i % 10 == 9:
            answer = json.dumps({"reply": answer, "order": {"id": "A-1042"}})
        out.append(answer)
    return out


MIX: list[Callable[[str], object]] = [
    contains("A-1042"),
    contains("2 working days"),
    avoids("SAVE100", "discount code:", "has been issued"),
    word_count(3, 25),
    matches(r"\bA-\d{4}\b"),
    is_json_with("reply", "order.id"),
    has_terms("shipped", "A-1042"),
    has_terms("review"),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--answers", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    answers = answers_from_the_stand_in(args.answers, args.seed)
    n_checks = len(answers) * len(MIX)
    needles = ["A-1042", "2 working days", "SAVE100", "shipped", "review", "{", "A-", "the"]

    def baseline() -> None:
        for answer in answers:
            for needle in needles:
                _ = needle in answer

    def mix() -> None:
        for answer in answers:
            for check in MIX:
                check(answer)

    def mix_wrapped() -> None:
        for answer in answers:
            for check in MIX:
                run_check(check, answer)

    base = min(timeit.repeat(baseline, number=1, repeat=args.repeats))
    plain = min(timeit.repeat(mix, number=1, repeat=args.repeats))
    wrapped = min(timeit.repeat(mix_wrapped, number=1, repeat=args.repeats))

    print(f"{len(answers):,} answers from the shop stand-in x {len(MIX)} checks = {n_checks:,}")
    print(f"baseline ('in' substring loop): {n_checks / base:>12,.0f} checks/s")
    print(f"built-in mix:                   {n_checks / plain:>12,.0f} checks/s")
    print(f"built-in mix through run_check: {n_checks / wrapped:>12,.0f} checks/s")
    print(f"ratio: the mix takes {plain / base:.1f}x the time of the baseline")
    print("per check:")
    for check in MIX:
        t = min(
            timeit.repeat(lambda c=check: [c(a) for a in answers], number=1, repeat=args.repeats)
        )
        print(f"  {check!r:55} {len(answers) / t:>12,.0f} checks/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
