"""Running again after a mistake: ``--force`` on every verb that writes a file,
the old file replaced in one step, and no file left by a run that wrote no sample."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalstats._files import replacing
from evalstats.cli import main
from evalstats.errors import ProviderError, ResultsFileError
from evalstats.results._file import ResultsWriter, read_results

SHOP = ["shop", "--runs", "1", "--no-progress"]


def variants_of(path: Path) -> list[str]:
    return [v["name"] for v in read_results(path).manifest["variants"]]


def tasks_of(path: Path) -> list[str]:
    return [str(v.get("task")) for v in read_results(path).manifest["variants"]]


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".part"))


def test_run_again_with_force_replaces_the_file_with_the_new_run(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r.jsonl"
    assert main(["run", *SHOP, "--variant", "v=standin:shop-v1", "--out", str(out)]) == 0
    # The wrong model: without --force the file is kept and the refusal names --force.
    again = ["run", *SHOP, "--variant", "v=standin:shop-v2", "--out", str(out)]
    capsys.readouterr()
    assert main(again) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already exists" in err and "--force" in err
    assert "shop-v1" in tasks_of(out)[0]
    assert main([*again, "--force"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(f"{out}: finished")  # the file's own name, not a temporary one
    assert "shop-v2" in tasks_of(out)[0] and len(read_results(out).samples) == 4
    assert leftovers(tmp_path) == []


def test_a_forced_run_that_writes_no_sample_leaves_the_old_file_as_it_was(
    tmp_path: Path, capsys
) -> None:
    from evalstats.demo._server import serve

    out = tmp_path / "r.jsonl"
    assert main(["run", *SHOP, "--variant", "v=standin:shop-v1", "--out", str(out)]) == 0
    before = out.read_bytes()
    with serve(seed=0, error_rate=1.0, retry_after=0) as server:
        argv = ["run", *SHOP, "--variant", f"v=openai:shop-v1,base_url={server.base_url}/v1"]
        argv += ["--retries", "0", "--stop-after-unmeasured", "2", "--out", str(out), "--force"]
        capsys.readouterr()
        assert main(argv) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert out.read_bytes() == before and leftovers(tmp_path) == []


def test_a_run_that_fails_before_its_first_sample_leaves_no_file(tmp_path: Path) -> None:
    from evalstats.running._engine import Variant, run

    def refused(prompt: str) -> str:
        raise ProviderError("HTTP 404: the model 'gtp-4o' does not exist")

    out = tmp_path / "r.jsonl"
    with pytest.raises(ProviderError, match="gtp-4o"):
        run("shop", [Variant("v", refused)], runs=1, out=out, progress=False, retries=0)
    assert not out.exists()
    # ...so the corrected run takes the same path without --force.
    run("shop", ["v=standin:shop-v1"], runs=1, out=out, progress=False)
    assert len(read_results(out).samples) == 4


def test_a_run_that_fails_after_a_sample_keeps_its_file_to_resume(tmp_path: Path) -> None:
    from evalstats.running._engine import Variant, run

    calls = {"n": 0}

    def fails_second(prompt: str) -> str:
        calls["n"] += 1
        if calls["n"] > 1:
            raise ProviderError("HTTP 401: the key was revoked")
        return "Your order A-1042 has shipped."

    out = tmp_path / "r.jsonl"
    with pytest.raises(ProviderError):
        run("shop", [Variant("v", fails_second)], runs=1, out=out, progress=False, retries=0)
    assert len(read_results(out).samples) == 1


def test_force_goes_without_resume_and_extend(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r.jsonl"
    assert main(["run", *SHOP, "--variant", "v=standin:shop-v1", "--out", str(out)]) == 0
    capsys.readouterr()
    for extra in (["--resume"], ["--extend", str(out)]):
        argv = ["run", *SHOP, "--variant", "v=standin:shop-v1", "--out", str(out), *extra]
        assert main([*argv, "--force"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--force" in err


def _run(folder: Path, name: str, seed: int = 0) -> Path:
    out = folder / name
    argv = ["run", *SHOP, "--variant", "v=standin:shop-v1", "--seed", str(seed), "--out", str(out)]
    assert main(argv) == 0
    return out


def test_import_merge_and_rescore_replace_with_force(tmp_path: Path, capsys) -> None:
    a, b = _run(tmp_path, "a.jsonl"), _run(tmp_path, "b.jsonl", seed=1)
    target = tmp_path / "t.jsonl"
    target.write_text("old\n", encoding="utf-8")
    verbs = {
        "merge": ["merge", str(a), str(b), "--out", str(target)],
        "import": ["import", str(a), "--variant", "v", "--out", str(target)],
        "rescore": ["rescore", str(a), "--suite", "shop", "--out", str(target)],
    }
    for verb, argv in verbs.items():
        capsys.readouterr()
        assert main(argv) == 2, verb
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "already exists" in err and "--force" in err, verb
        assert main([*argv, "--force"]) == 0, verb
        assert read_results(target).samples, verb
    assert leftovers(tmp_path) == []


def test_rescore_with_force_may_replace_the_run_itself(tmp_path: Path) -> None:
    a = _run(tmp_path, "a.jsonl")
    samples = len(read_results(a).samples)
    assert main(["rescore", str(a), "--suite", "shop", "--out", str(a), "--force"]) == 0
    assert len(read_results(a).samples) == samples
    assert read_results(a).manifest["rescored"]


@pytest.mark.parametrize(
    "argv",
    [
        ["run", *SHOP, "--variant", "v=standin:shop-v1", "--out", "{d}", "--force"],
        ["import", "{a}", "--variant", "v", "--out", "{d}", "--force"],
        ["merge", "{a}", "{b}", "--out", "{d}", "--force"],
        ["rescore", "{a}", "--suite", "shop", "--out", "{d}", "--force"],
        ["report", "{a}", "--html", "{d}", "--force"],
    ],
    ids=lambda argv: argv[0],
)
def test_force_on_a_folder_is_refused_in_one_line(argv, tmp_path: Path, capsys) -> None:
    a, b = _run(tmp_path, "a.jsonl"), _run(tmp_path, "b.jsonl", seed=1)
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "inside").write_text("kept", encoding="utf-8")
    capsys.readouterr()
    filled = [x.format(a=a, b=b, d=folder) for x in argv]
    assert main(filled) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a folder" in err and "Traceback" not in err
    assert (folder / "inside").read_text(encoding="utf-8") == "kept"


def test_replacing_keeps_the_old_file_when_the_writer_fails(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    out.write_bytes(b"old run\n")
    with pytest.raises(RuntimeError), replacing(out, force=True) as target:
        assert target != str(out) and os.path.dirname(target) == str(tmp_path)
        with ResultsWriter.create(target, {"variants": [{"name": "v"}], "runs": 1}) as w:
            w.write_sample(
                {"case": "x", "variant": "v", "repeat": 0, "status": "completed", "checks": []}
            )
            raise RuntimeError("the disk filled up")
    assert out.read_bytes() == b"old run\n" and leftovers(tmp_path) == []


def test_replacing_without_force_refuses_an_existing_file(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    out.write_bytes(b"old run\n")
    with (
        pytest.raises(ResultsFileError, match="already exists"),
        replacing(out, error=ResultsFileError),
    ):
        raise AssertionError("not reached")
    with replacing(tmp_path / "new.jsonl") as target:  # a new file is written at its name
        assert target == str(tmp_path / "new.jsonl")


def test_a_wrong_model_name_leaves_no_file_and_the_fixed_run_takes_the_path(
    tmp_path: Path, capsys
) -> None:
    # The row of the issue as a user meets it: a model the server does not have.
    from evalstats.demo._server import serve

    out = tmp_path / "r.jsonl"
    with serve(seed=0) as server:
        url = f"{server.base_url}/v1"
        argv = ["run", *SHOP, "--out", str(out)]
        assert main([*argv, "--variant", f"a=openai:shop-v9,base_url={url}"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "shop-v9" in err
        assert not out.exists()
        assert main([*argv, "--variant", f"a=openai:shop-v1,base_url={url}"]) == 0
    assert len(read_results(out).samples) == 4


@pytest.mark.parametrize(
    "extra", [["--runs", "2"], ["--sequential", "--max-runs", "2"]], ids=["fixed", "sequential"]
)
def test_the_demo_runs_again_into_its_folder_with_force(extra, tmp_path: Path, capsys) -> None:
    folder = tmp_path / "demo"
    argv = ["demo", "--out-dir", str(folder), "--no-progress", *extra]
    assert main(argv) == 0
    first = (folder / "results.jsonl").read_bytes()
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already exists" in err and "--force" in err
    assert (folder / "results.jsonl").read_bytes() == first
    assert main([*argv, "--force"]) == 0
    assert read_results(folder / "results.jsonl").samples
    assert leftovers(folder) == []
