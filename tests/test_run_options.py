"""The engine's options as small frozen objects, checked in their constructors."""

from __future__ import annotations

import inspect

import pytest

from evalstats import Limits, Retries, Selection, run
from evalstats.errors import InvalidArgument
from evalstats.results._file import read_results
from evalstats.running._engine import run_async
from evalstats.running._options import DEFAULT_TIMEOUT_S, gather

SHOP = ["old=standin:shop-v1", "new=standin:shop-v2"]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Selection(limit=0), "limit=0"),
        (lambda: Selection(tags="orders"), "tags='orders' must be a list of texts"),
        (lambda: Selection(case_ids=["a", ""]), "case_ids[1]=''"),
        (lambda: Selection(include_holdout="yes"), "include_holdout='yes' must be True or False"),
        (lambda: Retries(-1), "retries=-1"),
        (lambda: Retries(backoff=float("nan")), "backoff=nan must be a number of seconds"),
        (lambda: Retries(stop_after_unmeasured=0), "stop_after_unmeasured=0"),
        (lambda: Limits(concurrency=0), "concurrency=0"),
        (lambda: Limits(timeout=-5), "timeout=-5"),
    ],
)
def test_each_object_checks_its_fields_at_the_door(make, message) -> None:
    with pytest.raises(InvalidArgument, match=message.replace("[", r"\[").replace("]", r"\]")):
        make()


def test_the_keywords_and_the_objects_give_the_same_run(tmp_path) -> None:
    by_keywords = tmp_path / "a.jsonl"
    by_objects = tmp_path / "b.jsonl"
    run(
        "shop",
        SHOP,
        runs=2,
        out=by_keywords,
        progress=False,
        case_ids=["order*"],
        concurrency=2,
        retries=1,
        backoff=0.0,
    )
    run(
        "shop",
        SHOP,
        runs=2,
        out=by_objects,
        progress=False,
        selection=Selection(case_ids=["order*"]),
        limits=Limits(concurrency=2),
        retries=Retries(1, backoff=0.0),
    )
    a, b = read_results(by_keywords), read_results(by_objects)
    assert a.manifest["selection"] == b.manifest["selection"] == {"cases": ["order*"]}
    assert a.manifest["concurrency"] == b.manifest["concurrency"] == 2
    assert [s["answer"] for s in a.samples] == [s["answer"] for s in b.samples]


def test_an_option_given_both_ways_or_unknown_is_refused() -> None:
    with pytest.raises(InvalidArgument, match=r"concurrency= and limits= both given"):
        gather(None, 3, Limits(), {"concurrency": 2})
    with pytest.raises(InvalidArgument, match=r"backoff= and retries=Retries\(...\) both given"):
        gather(None, Retries(), None, {"backoff": 1.0})
    with pytest.raises(InvalidArgument, match=r"concurency= is not an option .*'concurrency'"):
        gather(None, 3, None, {"concurency": 2})
    with pytest.raises(InvalidArgument, match=r"limits=4 must be a Limits"):
        gather(None, 3, 4, {})  # type: ignore[arg-type]


def test_the_default_timeout_is_told_apart_from_one_given() -> None:
    assert gather(None, 3, None, {})[2].timeout is DEFAULT_TIMEOUT_S
    given = gather(None, 3, None, {"timeout": 60})[2].timeout
    assert given == 60 and given is not DEFAULT_TIMEOUT_S


def test_run_and_run_async_share_one_signature() -> None:
    sync = inspect.signature(run)
    coroutine = inspect.signature(run_async)
    assert list(sync.parameters) == [p for p in coroutine.parameters if p != "_handle_signals"]
    assert {"selection", "retries", "limits"} <= set(sync.parameters)


def test_limits_choose_8_for_a_model_service_over_http_and_1_otherwise() -> None:
    from evalstats.running._variants import parse_variant

    http = parse_variant("a=openai:m,base_url=http://127.0.0.1:9/v1").task
    local = parse_variant("b=standin:shop-v1").task
    assert Limits().concurrency is None
    assert Limits().concurrency_for([local, http]) == 8
    assert Limits().concurrency_for([local]) == 1
    assert Limits().concurrency_for([lambda prompt: "x"]) == 1
    assert Limits(concurrency=2).concurrency_for([http]) == 2
