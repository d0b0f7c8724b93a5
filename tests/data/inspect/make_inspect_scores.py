"""Make the Inspect AI logs of graded scorers, offline, with Inspect's mock model.

Run from this folder with inspect-ai installed:

    python make_inspect_scores.py

Four questions, 2 epochs, answered by ``mockllm/model`` with answers fixed in
advance (see ANSWERS), scored three ways, one log each (JSON format, so that
the tests can read the raw values without Inspect):

- ``scores/scores_f1.json``: Inspect's own ``f1()`` scorer (token F1, a number
  from 0 to 1), and the same run again as ``scores/scores_f1.eval``, Inspect's
  zipped format (no sample errs in it, so nothing needs scrubbing);
- ``scores/scores_cpi.json``: a scorer giving partial credit, ``C`` for the
  target exactly, ``P`` for an answer that contains it among other words,
  ``I`` otherwise;
- ``scores/scores_rubric.json``: a scorer on a 1-to-5 rubric (1 plus one point
  for each target word found, capped at 5, and 5 for the exact target), a
  scale Inspect does not record (importing it needs ``--scale 1,5``); the mock
  model fails once (question q4, epoch 2), so the log has an errored sample;
- ``scores/scores_dict.json``: one scorer whose value is a dictionary of two
  metrics, ``exact`` (1 for the target exactly, else 0) and ``overlap`` (the
  share of the target's words in the answer), the way a scorer reports several
  metrics at once; question q3's second answer is left unscored (``NaN``,
  Inspect's mark of a sample not scored).

An error's traceback names files of the machine that made the log; the copy
kept here has the error's message in its place (``_scrubbed``), nothing else
changed.
"""

import glob
import json
import os
import shutil
import tempfile

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    PARTIAL,
    Score,
    Target,
    accuracy,
    f1,
    mean,
    scorer,
)
from inspect_ai.solver import TaskState, generate

QUESTIONS = [
    ("q1", "Name the capital of France.", "Paris"),
    ("q2", "Which two colours make green?", "blue and yellow"),
    ("q3", "What do bees make?", "honey and wax"),
    ("q4", "Name the largest planet.", "Jupiter"),
]
EPOCHS = 2

# Each question's answers, epoch by epoch.
ANSWERS = {
    "q1": ["Paris", "It is Paris, of course"],
    "q2": ["blue and yellow", "yellow"],
    "q3": ["honey", "wax and honey"],
    "q4": ["Saturn", "jupiter"],
}
#: In the rubric's log the model call fails instead of this answer.
FAILS = ("q4", 1)


@scorer(metrics=[accuracy()])
def partial_credit():
    async def score(state: TaskState, target: Target) -> Score:
        answer = state.output.completion.strip()
        if answer == target.text:
            value = CORRECT
        elif target.text.lower() in answer.lower():
            value = PARTIAL
        else:
            value = INCORRECT
        return Score(value=value, answer=answer)

    return score


@scorer(metrics=[mean()])
def rubric():
    async def score(state: TaskState, target: Target) -> Score:
        answer = state.output.completion.strip()
        if answer == target.text:
            points = 5
        else:
            words = set(answer.lower().split())
            points = min(5, 1 + sum(w in words for w in target.text.lower().split()))
        return Score(value=points, answer=answer, explanation=f"{points} of 5")

    return score


@scorer(metrics={"exact": [accuracy()], "overlap": [mean()]})
def exact_and_overlap():
    async def score(state: TaskState, target: Target) -> Score:
        answer = state.output.completion.strip()
        if answer == "wax and honey":  # q3, epoch 2: a judge that could not decide
            return Score(value=float("nan"), answer=answer)
        wanted = target.text.lower().split()
        words = set(answer.lower().replace(",", " ").split())
        overlap = sum(w in words for w in wanted) / len(wanted)
        return Score(value={"exact": int(answer == target.text), "overlap": overlap}, answer=answer)

    return score


def answers(fails: bool):
    left = {q: list(ANSWERS[i]) for i, q, _ in QUESTIONS}
    if fails:
        left[QUESTIONS[3][1]][FAILS[1]] = None

    def output(messages, tools, tool_choice, config):
        question = messages[-1].text
        answer = left[question].pop(0)
        if answer is None:
            raise RuntimeError("the model service dropped the connection")
        usage = ModelUsage(
            input_tokens=len(question.split()),
            output_tokens=len(answer.split()),
            total_tokens=len(question.split()) + len(answer.split()),
        )
        out = ModelOutput.from_content(model="mockllm/model", content=answer)
        out.usage = usage
        return out

    return output


def run(name: str, the_scorer, out: str, *, fails: bool = False, fmt: str = "json") -> None:
    task = Task(
        name=name,
        dataset=[Sample(id=i, input=q, target=t) for i, q, t in QUESTIONS],
        solver=generate(),
        scorer=the_scorer,
        epochs=EPOCHS,
    )
    model = get_model("mockllm/model", custom_outputs=answers(fails))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        eval(
            task,
            model=model,
            log_dir=folder,
            log_format=fmt,
            max_connections=1,
            max_samples=1,
            display="none",
            fail_on_error=False,
            retry_on_error=0,
        )
        (log,) = glob.glob(os.path.join(folder, f"*.{fmt}"))
        if fmt == "eval":
            shutil.copyfile(log, out)
            return
        with open(log, encoding="utf-8") as f:
            doc = json.load(f)
        with open(out, "w", encoding="utf-8") as f:
            json.dump(_scrubbed(doc), f, indent=2, ensure_ascii=False)
            f.write("\n")


def _scrubbed(value):
    """``value`` with every error's traceback replaced by its message."""
    if isinstance(value, dict):
        out = {k: _scrubbed(v) for k, v in value.items()}
        if "traceback" in out:  # an error's, or a model event's beside its error
            out["traceback"] = out["traceback_ansi"] = str(out.get("message") or out["error"])
        return out
    if isinstance(value, list):
        return [_scrubbed(v) for v in value]
    return value


if __name__ == "__main__":
    run("quiz_f1", f1(), "scores/scores_f1.json")
    run("quiz_f1", f1(), "scores/scores_f1.eval", fmt="eval")
    run("quiz_cpi", partial_credit(), "scores/scores_cpi.json")
    run("quiz_rubric", rubric(), "scores/scores_rubric.json", fails=True)
    run("quiz_dict", exact_and_overlap(), "scores/scores_dict.json")
