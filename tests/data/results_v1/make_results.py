"""Write ``results.jsonl``, a small run of the engine, and what the readers said of it.

The file keeps every kind of record a reader must tell apart: completed,
incomplete (a task that raised, an empty answer) and unmeasured samples;
checks that passed, failed, failed with nothing to inspect, and a judged check
whose judge gave no verdict; token counts. ``expected/`` holds what ``report``
(text and JSON), ``compare``, ``gate`` and the HTML page print for it, so that
files of this format keep reading and reporting the same. An existing
``results.jsonl`` is kept: run with an existing file, this writes only
``expected/``, from the evalstats it imports.

Run it from the repository root with evalstats installed::

    python tests/data/results_v1/make_results.py
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

from evalstats.cli import main
from evalstats.errors import TransientProviderError
from evalstats.running._checks import contains, links_within, word_count
from evalstats.running._engine import run
from evalstats.running._judge import judged_by
from evalstats.running._suite import Case
from evalstats.running._tasks import TaskResult
from evalstats.running._variants import Variant

HERE = Path(__file__).resolve().parent

CASES = [
    Case("order", "Where is my order A-1042?", (contains("A-1042"), word_count(3, 12))),
    Case(
        "refund", "I want a refund.", (contains("refund"), judged_by(lambda p: _judge(p), "Kind."))
    ),
    Case("links", "Where can I read the terms?", (links_within("example.com"),)),
    Case("hello", "Hello!", (contains("hello"),)),
    Case("hours", "When are you open?", (contains("9"), word_count(2, 10))),
]


def _judge(prompt: str) -> str:
    if "sorry" in prompt:
        raise TransientProviderError("the judge is rate limited")
    return "It is kind.\nPASS" if "gladly" in prompt else "It is curt.\nFAIL"


def _answer(variant: str, case: str, seed: int) -> object:
    turn = seed % 7
    if case == "order":
        if variant == "a" and turn in (0, 3):
            raise ValueError("the order service broke")
        return "A-1042 has shipped." if variant == "b" or turn % 2 else "It has shipped today."
    if case == "refund":
        if turn == 1:
            return "sorry, we cannot refund"
        return "We gladly refund you." if variant == "b" else "No refund."
    if case == "links":
        return "Read https://example.com/terms" if turn % 3 else "Read the terms on our site."
    if case == "hello":
        return "" if variant == "a" and turn == 2 else "Hello, how can I help?"
    if turn == 5 and variant == "a":
        raise TransientProviderError("503 service unavailable")
    return "We open at 9." if variant == "b" else "In the morning, most days of the week."


class _Task:
    """Variant ``a`` or ``b`` as a task: its answers, and for ``b`` token counts."""

    def __init__(self, variant: str) -> None:
        self.variant = variant

    def describe(self) -> dict[str, object]:
        return {"kind": "python", "name": f"fixture-{self.variant}", "model": f"m-{self.variant}"}

    async def run(self, prompt, *, seed: int) -> object:
        case = next(c.id for c in CASES if c.prompt in str(prompt.to_dict()))
        answer = _answer(self.variant, case, seed)
        if self.variant == "b" and isinstance(answer, str):
            return TaskResult(answer, tokens={"input": 10 + seed % 5, "output": len(answer)})
        return answer


def _say(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    return f"exit {code}\n{out.getvalue()}"


def make() -> int:
    path = HERE / "results.jsonl"
    if not path.exists():
        run(
            CASES,
            [Variant("a", _Task("a")), Variant("b", _Task("b"))],
            runs=4,
            out=path,
            progress=False,
            retries=0,
            backoff=0.0,
            seed=7,
        )
    expected = HERE / "expected"
    expected.mkdir(exist_ok=True)
    shown = str(path)
    for name, argv in VERBS.items():
        text = _say([a.replace("FILE", shown) for a in argv]).replace(shown, "FILE")
        (expected / name).write_text(text, encoding="utf-8")
    from evalstats.presenting._html import render_html

    page = render_html(shown).replace(shown, "FILE")
    (expected / "report.html").write_text(page, encoding="utf-8")
    return 0


#: What the readers print for the file (FILE stands for its path).
VERBS = {
    "report.txt": ["report", "FILE"],
    "report.json": ["report", "FILE", "--json"],
    "compare.txt": ["compare", "FILE", "--a", "a", "--b", "b"],
    "compare.json": ["compare", "FILE", "--a", "a", "--b", "b", "--json"],
    "gate.txt": ["gate", "FILE", "--variant", "b", "--min-pass", "0.5"],
}

if __name__ == "__main__":
    sys.exit(make())
