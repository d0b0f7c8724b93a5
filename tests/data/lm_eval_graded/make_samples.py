"""Write an lm-evaluation-harness fixture with a continuous metric: token F1 beside exact match.

As ``tests/data/lm_eval/make_samples.py`` (lm-eval needs a model and a dataset
download to run, so the files are written by hand in the format of its
``--log_samples`` option, lm-eval 0.4.x), for a reading task scored the way
its DROP and SQuAD tasks are: per document ``em`` (1 or 0) and ``f1``, the
bag-of-words F1 of the answer against the target (SQuAD's definition:
lower case, punctuation and articles dropped). Twenty documents; the model
answers half of them exactly, the others in part or not at all.
Run from this folder: ``python make_samples.py``.
"""

import hashlib
import json
import re
import string
from collections import Counter

DATE = "2026-12-01T09-30-00.000000"
TASK = "reading_tiny"
MODEL = "example-org/tiny-reader"

# (question, target, answer): the model's answers are fixed here.
DOCS = [
    ("Who wrote the letter?", "the harbour master", "the harbour master"),
    ("Where did they meet?", "at the old mill", "the mill"),
    ("What was delivered?", "two crates of apples", "crates of apples"),
    ("When did the ship leave?", "before dawn", "before dawn"),
    ("Who found the key?", "the youngest sister", "her sister"),
    ("What colour was the door?", "dark green", "green"),
    ("How did they travel?", "by night train", "by night train"),
    ("What was broken?", "the kitchen window", "a window in the kitchen"),
    ("Who paid the bill?", "nobody", "the captain"),
    ("What did the sign say?", "closed for repairs", "closed for repairs"),
    ("Where was the map?", "under the floorboards", "under the floorboards"),
    ("What did she plant?", "three rows of beans", "beans"),
    ("Who rang the bell?", "the night porter", "the night porter"),
    ("What was missing?", "the silver spoon", "a spoon"),
    ("How long did they wait?", "nearly an hour", "an hour"),
    ("What did he sell?", "his grandfather's clock", "his grandfather's clock"),
    ("Where did the road end?", "at the river bank", "the bank of the river"),
    ("Who won the race?", "the baker's son", "the baker's son"),
    ("What fell from the shelf?", "a jar of honey", "nothing"),
    ("What did they name the dog?", "Biscuit", "Biscuit"),
]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def tokens(text: str) -> list[str]:
    text = "".join(c for c in text.lower() if c not in string.punctuation)
    return re.sub(r"\b(a|an|the)\b", " ", text).split()


def f1(answer: str, target: str) -> float:
    a, t = tokens(answer), tokens(target)
    same = sum((Counter(a) & Counter(t)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(a), same / len(t)
    return 2 * precision * recall / (precision + recall)


def main() -> None:
    lines = []
    for doc_id, (question, target, answer) in enumerate(DOCS):
        prompt = f"Question: {question}\nAnswer:"
        lines.append(
            {
                "doc_id": doc_id,
                "doc": {"question": question, "answer": target},
                "target": target,
                "arguments": {
                    "gen_args_0": {"arg_0": prompt, "arg_1": {"until": ["\n"], "do_sample": False}}
                },
                "resps": [[f" {answer}"]],
                "filtered_resps": [answer],
                "filter": "none",
                "metrics": ["em", "f1"],
                "doc_hash": sha(
                    json.dumps({"question": question, "answer": target}, sort_keys=True)
                ),
                "prompt_hash": sha(prompt),
                "target_hash": sha(target),
                "em": 1.0 if tokens(answer) == tokens(target) else 0.0,
                "f1": f1(answer, target),
            }
        )
    with open(f"samples_{TASK}_{DATE}.jsonl", "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    n = len(lines)
    results = {
        "results": {
            TASK: {
                "alias": TASK,
                "em,none": sum(x["em"] for x in lines) / n,
                "f1,none": sum(x["f1"] for x in lines) / n,
            }
        },
        "group_subtasks": {TASK: []},
        "configs": {
            TASK: {
                "task": TASK,
                "output_type": "generate_until",
                "metric_list": [{"metric": "em"}, {"metric": "f1"}],
            }
        },
        "versions": {TASK: 1.0},
        "n-shot": {TASK: 0},
        "higher_is_better": {TASK: {"em": True, "f1": True}},
        "n-samples": {TASK: {"original": n, "effective": n}},
        "config": {"model": "hf", "model_args": f"pretrained={MODEL}", "batch_size": 1},
        "model_name": MODEL,
        "model_name_sanitized": MODEL.replace("/", "__"),
        "lm_eval_version": "0.4.9",
        "date": 1796117400.0,
    }
    with open(f"results_{DATE}.json", "w", encoding="utf-8") as f:
        json.dump(results, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
