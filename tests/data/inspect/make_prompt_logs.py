"""Make the Inspect AI logs of a prompt comparison, offline, with Inspect's mock model.

Run from this folder with inspect-ai installed:

    python make_prompt_logs.py

The usual way to compare prompts in Inspect is one ``@task`` per prompt over
the same dataset. These logs are of the five questions of ``make_logs.py``
(3 epochs, scorer ``match``), answered by one mock model (``mockllm/model``):

- ``prompts/quiz_terse.eval`` and ``prompts/quiz_polite.eval``: two tasks, each
  with its own system prompt, whose answers are ANSWERS["a"] and ANSWERS["b"]
  of ``make_logs.py``;
- ``quiz_style_terse.eval`` and ``quiz_style_polite.eval``: one task ``quiz_style``
  run with two values of its argument ``style``;
- ``quiz_changed.eval``: a task whose question q3 has another target, and whose
  q5 is missing (it cannot be paired with the others);
- ``quiz_error.eval``: a run that ended in an error before any sample was scored.

Each log but the errored one is also written as the evalstats results file its
import makes, under ``imported/``, so that joining them is tested without
inspect-ai installed.
"""

import glob
import os
import shutil
import tempfile

from inspect_ai import Task, eval, task
from inspect_ai.dataset import Sample
from inspect_ai.model import get_model
from inspect_ai.scorer import match
from inspect_ai.solver import Generate, TaskState, generate, solver, system_message
from make_logs import ANSWERS, EPOCHS, QUESTIONS, answers

SYSTEM = {
    "terse": "Answer with the answer only.",
    "polite": "Answer kindly, then give the answer on its own.",
}


def _dataset(changed: bool = False) -> list[Sample]:
    rows = []
    for i, q, t in QUESTIONS:
        if changed and i == "q5":
            continue
        rows.append(Sample(id=i, input=q, target="eight" if changed and i == "q3" else t))
    return rows


def _task(name: str, style: str, *, changed: bool = False) -> Task:
    return Task(
        name=name,
        dataset=_dataset(changed),
        solver=[system_message(SYSTEM[style]), generate()],
        scorer=match(numeric=False),
        epochs=EPOCHS,
    )


@task
def quiz_style(style: str = "terse") -> Task:
    return _task("quiz_style", style)


@solver
def broken():
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        raise RuntimeError("the tool server refused the connection")

    return solve


def _eval(the_task: Task, which: str, out: str) -> None:
    # The mock model answers as model "a" or "b" of make_logs.py, but is named
    # mockllm/model in both logs: one model, two prompts.
    model = get_model("mockllm/model", custom_outputs=answers(which))
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        eval(
            the_task,
            model=model,
            log_dir=folder,
            log_format="eval",
            max_connections=1,
            display="none",
            max_samples=1,
        )
        (log,) = glob.glob(os.path.join(folder, "*.eval"))
        shutil.copyfile(log, out)


def _without_tracebacks(path: str) -> None:
    """Drop the tracebacks of an errored log (in its error, its samples' errors and
    their events): they name the folders of the machine that made it, and a
    reader needs only the error's message."""
    from inspect_ai.log import EvalLog, read_eval_log, write_eval_log

    def scrub(value):
        if isinstance(value, dict):
            return {
                k: "" if k in ("traceback", "traceback_ansi") else scrub(v)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [scrub(v) for v in value]
        return value

    log = read_eval_log(path)
    write_eval_log(EvalLog.model_validate(scrub(log.model_dump())), path)


def _imported() -> None:
    from evalstats.reading._logs import load_results, write_results

    os.makedirs("imported", exist_ok=True)
    for log in sorted(glob.glob("prompts/*.eval") + glob.glob("quiz_[sc]*.eval")):
        stem = os.path.splitext(os.path.basename(log))[0]
        write_results(load_results(log), os.path.join("imported", f"{stem}.jsonl"), force=True)


if __name__ == "__main__":
    assert set(ANSWERS) == {"a", "b"}
    _eval(_task("quiz_terse", "terse"), "a", "prompts/quiz_terse.eval")
    _eval(_task("quiz_polite", "polite"), "b", "prompts/quiz_polite.eval")
    _eval(quiz_style(style="terse"), "a", "quiz_style_terse.eval")
    _eval(quiz_style(style="polite"), "b", "quiz_style_polite.eval")
    _eval(_task("quiz_changed", "terse", changed=True), "a", "quiz_changed.eval")
    errored = Task(
        name="quiz_error",
        dataset=_dataset(),
        solver=[broken()],
        scorer=match(numeric=False),
        epochs=1,
    )
    _eval(errored, "a", "quiz_error.eval")
    _without_tracebacks("quiz_error.eval")
    _imported()
