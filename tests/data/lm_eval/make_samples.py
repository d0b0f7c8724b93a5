"""Write the lm-evaluation-harness fixture: a samples file and its aggregated results.

lm-eval itself needs a model and a dataset download to run, so these files are
written by hand, line for line in the format its ``--log_samples`` option
documents (lm-eval 0.4.x, ``EvaluationTracker.save_results_samples``): one JSON
object per document with ``doc_id``, ``doc``, ``target``, ``arguments``,
``resps``, ``filtered_resps``, ``filter``, ``metrics``, the three hashes and
each metric's value; and ``results_<date>.json`` with ``results``, ``config``,
``model_name`` and ``lm_eval_version``. Run from this folder: ``python make_samples.py``.
"""

import hashlib
import json

DATE = "2026-11-30T13-45-00.000000"
TASK = "arith_tiny"
MODEL = "example-org/tiny-model"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def main() -> None:
    lines = []
    right = 0
    for doc_id in range(30):
        a, b = 3 + doc_id, 7 + 2 * doc_id
        question = f"What is {a} + {b}?"
        target = str(a + b)
        # The tiny model slips on every third question, and on doc 10.
        answer = str(a + b + 1) if doc_id % 3 == 2 or doc_id == 10 else target
        prompt = f"Question: {question}\nAnswer:"
        em = 1.0 if answer == target else 0.0
        right += em == 1.0
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
                "metrics": ["exact_match"],
                "doc_hash": sha(
                    json.dumps({"question": question, "answer": target}, sort_keys=True)
                ),
                "prompt_hash": sha(prompt),
                "target_hash": sha(target),
                "exact_match": em,
            }
        )
    with open(f"samples_{TASK}_{DATE}.jsonl", "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    results = {
        "results": {
            TASK: {"alias": TASK, "exact_match,none": right / 30, "exact_match_stderr,none": 0.0861}
        },
        "group_subtasks": {TASK: []},
        "configs": {
            TASK: {
                "task": TASK,
                "output_type": "generate_until",
                "metric_list": [{"metric": "exact_match"}],
            }
        },
        "versions": {TASK: 1.0},
        "n-shot": {TASK: 0},
        "higher_is_better": {TASK: {"exact_match": True}},
        "n-samples": {TASK: {"original": 30, "effective": 30}},
        "config": {"model": "hf", "model_args": f"pretrained={MODEL}", "batch_size": 1},
        "model_name": MODEL,
        "model_name_sanitized": MODEL.replace("/", "__"),
        "lm_eval_version": "0.4.9",
        "date": 1796046300.0,
    }
    with open(f"results_{DATE}.json", "w", encoding="utf-8") as f:
        json.dump(results, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
