"""Make the Inspect AI log fixtures, offline, with Inspect's mock model.

Run from this folder with inspect-ai installed:

    python make_logs.py

It evaluates one small task (five questions, scorer ``match``, 3 epochs) with
two mock models whose answers are fixed in advance (``mockllm/model`` with
custom outputs): model A answers four of the five questions right in most
epochs, model B all five. The logs land here as ``inspect_a.eval``,
``inspect_b.eval`` and ``inspect_a.json`` (the same run as A, JSON format).
"""

import glob
import os
import shutil
import tempfile

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate

QUESTIONS = [
    ("q1", "What is 2 + 2?", "4"),
    ("q2", "What is the capital of France?", "Paris"),
    ("q3", "How many legs has a spider?", "8"),
    ("q4", "What colour is the sky on a clear day?", "blue"),
    ("q5", "What is 10 / 4?", "2.5"),
]
EPOCHS = 3

# Answers per question, epoch by epoch. The mock model's custom output is a
# function that finds the question in the request and hands out that
# question's next answer, so the answers do not depend on the order requests run.
ANSWERS = {
    "a": [
        ["4", "4", "4"],
        ["Paris", "Paris", "Lyon"],
        ["8", "6", "8"],
        ["blue", "blue", "blue"],
        ["2", "2", "2.5"],
    ],
    "b": [
        ["4", "4", "4"],
        ["Paris", "Paris", "Paris"],
        ["8", "8", "8"],
        ["blue", "blue", "grey"],
        ["2.5", "2.5", "2.5"],
    ],
}


def task() -> Task:
    return Task(
        name="quiz",
        dataset=[Sample(id=i, input=q, target=t) for i, q, t in QUESTIONS],
        solver=generate(),
        scorer=match(numeric=False),
        epochs=EPOCHS,
    )


def answers(which: str):
    left = {q: list(a) for (_, q, _), a in zip(QUESTIONS, ANSWERS[which], strict=True)}

    def output(messages, tools, tool_choice, config):
        question = messages[-1].text
        answer = left[question].pop(0)
        # Usage given up front: without it the mock model counts tokens with a
        # tokenizer it would download.
        usage = ModelUsage(
            input_tokens=len(question.split()),
            output_tokens=1,
            total_tokens=len(question.split()) + 1,
        )
        out = ModelOutput.from_content(model=f"mockllm/{which}", content=answer)
        out.usage = usage
        return out

    return output


def run(which: str, fmt: str, out: str) -> None:
    model = get_model(f"mockllm/{which}", custom_outputs=answers(which))
    with tempfile.TemporaryDirectory() as folder:
        eval(
            task(),
            model=model,
            log_dir=folder,
            log_format=fmt,
            max_connections=1,
            display="none",
            max_samples=1,
        )
        (log,) = glob.glob(os.path.join(folder, f"*.{fmt}"))
        shutil.copyfile(log, out)


if __name__ == "__main__":
    run("a", "eval", "inspect_a.eval")
    run("b", "eval", "inspect_b.eval")
    run("a", "json", "inspect_a.json")
