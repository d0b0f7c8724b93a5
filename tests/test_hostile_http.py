"""Nothing a model server does can hang a run or exhaust memory, on any of the four wires.

Every test talks to :class:`tests.hostile_http.HostileServer` on 127.0.0.1 and is
bounded twice: the provider or the run must give up by itself within a few
seconds, and the test stops waiting well before a hang could pass for a
result. Memory is measured as the peak of Python's allocations while the
provider reads (``tracemalloc``), and, through the command line, as the
peak resident set size of the ``evalstats run`` process (``VmHWM``).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import tracemalloc

import pytest
from hostile_http import RETRY_AFTER, HostileServer

from evalstats.errors import InvalidArgument, ProviderError, TransientProviderError
from evalstats.results._file import read_results
from evalstats.running import _engine as engine
from evalstats.running._checks import contains
from evalstats.running._suite import Case
from evalstats.running.providers import PROVIDERS, make_provider
from evalstats.running.providers._body import DEFAULT_MAX_REPLY_BYTES

KINDS = sorted(PROVIDERS)
#: Modes whose body breaks the byte limit.
TOO_LARGE = ("endless", "huge", "huge-close", "gzip-bomb")
#: Modes that never finish a reply in time.
TOO_SLOW = ("delay", "trickle", "trickle-head")
#: Python allocations a provider may peak at while refusing a body (the limit is 8 MiB).
MEMORY_LIMIT = 32 << 20
#: Seconds of the provider's timeout in these tests.
TIMEOUT = 1.0


@pytest.fixture(scope="module")
def server():
    with HostileServer() as s:
        yield s


@pytest.fixture(autouse=True)
def no_service_settings(monkeypatch):
    for name in ("OPENAI_BASE_URL", "OLLAMA_HOST", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def provider(server, kind, mode, **options):
    options.setdefault("timeout", TIMEOUT)
    settings = {"base_url": server.base_url(kind, mode)}
    if "max_reply_bytes" in options:
        settings["max_reply_bytes"] = options.pop("max_reply_bytes")
    return make_provider(kind, "m", settings, **options)


def measured(make, *, within=15.0):
    """``(result or exception, seconds, peak bytes)`` of the coroutine ``make()`` makes."""

    async def bounded():
        try:
            return await asyncio.wait_for(make(), within)
        except TimeoutError:
            raise AssertionError(f"still waiting after {within} s: a hang") from None

    tracemalloc.start()
    tracemalloc.reset_peak()
    started = time.monotonic()
    try:
        outcome = asyncio.run(bounded())
    except AssertionError:
        raise
    except Exception as exc:
        outcome = exc
    finally:
        seconds = time.monotonic() - started
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return outcome, seconds, peak


async def complete(p):
    try:
        return await p.complete("Where is my order A-1042?", seed=1)
    finally:
        await p.aclose()


async def prepare(p):
    try:
        return await p.prepare()
    finally:
        await p.aclose()


# --- through the providers ------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mode", ["ok", "gzip", "deflate"])
def test_a_well_formed_answer_is_read_plain_or_compressed(server, kind, mode):
    done, _, _ = measured(lambda: complete(provider(server, kind, mode)))
    assert not isinstance(done, Exception), done
    assert done.answer == "Your order A-1042 has shipped."


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mode", TOO_LARGE)
def test_a_body_past_the_limit_is_no_answer_and_memory_stays_bounded(server, kind, mode):
    error, seconds, peak = measured(lambda: complete(provider(server, kind, mode)))
    assert isinstance(error, TransientProviderError), error
    assert "max_reply_bytes" in str(error) and "\n" not in str(error)
    assert seconds < 10
    assert peak < MEMORY_LIMIT, f"{peak / 2**20:.0f} MiB"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mode", TOO_SLOW)
def test_a_reply_that_does_not_end_in_time_is_no_answer(server, kind, mode):
    error, seconds, _ = measured(lambda: complete(provider(server, kind, mode)))
    assert isinstance(error, TransientProviderError), error
    assert "within the time allowed (1 s)" in str(error)
    # One deadline for the whole exchange: a byte a second does not extend it.
    assert TIMEOUT - 0.1 < seconds < TIMEOUT + 2


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mode", ["head-huge", "br"])
def test_endless_headers_or_an_unasked_coding_are_no_answer(server, kind, mode):
    error, seconds, peak = measured(lambda: complete(provider(server, kind, mode)))
    assert isinstance(error, TransientProviderError), error
    assert seconds < 10 and peak < MEMORY_LIMIT


@pytest.mark.parametrize("kind", KINDS)
def test_json_nested_past_what_python_reads_is_no_answer(server, kind):
    error, _, _ = measured(lambda: complete(provider(server, kind, "deep-json")))
    assert isinstance(error, TransientProviderError), error
    assert "nested too deeply" in str(error)


@pytest.mark.parametrize("kind", KINDS)
def test_an_error_with_a_huge_body_keeps_its_status_and_delay(server, kind):
    error, seconds, peak = measured(lambda: complete(provider(server, kind, "error-huge")))
    assert isinstance(error, TransientProviderError), error
    assert "HTTP 503" in str(error) and "(a body too large to read)" in str(error)
    assert error.retry_after == 1.0
    assert seconds < 5 and peak < MEMORY_LIMIT


@pytest.mark.parametrize("kind", KINDS)
def test_a_redirect_is_never_the_answer(server, kind):
    error, _, _ = measured(lambda: complete(provider(server, kind, "redirect")))
    assert type(error) is ProviderError, error
    assert "HTTP 307" in str(error)
    assert "redirects to 'http://elsewhere.invalid/v1/chat/completions'" in str(error)
    assert "does not follow redirects" in str(error)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mode", [*TOO_LARGE, *TOO_SLOW, "head-huge"])
def test_the_check_before_a_run_is_bounded_in_time_and_memory(server, kind, mode):
    outcome, seconds, peak = measured(lambda: prepare(provider(server, kind, f"setup-{mode}")))
    assert seconds < TIMEOUT + 2
    assert peak < MEMORY_LIMIT, f"{peak / 2**20:.0f} MiB"
    if kind == "ollama":
        # Ollama's prepare reads /api/show, /api/tags and /api/version whole.
        assert isinstance(outcome, TransientProviderError), outcome
    elif mode in ("delay", "trickle-head"):
        # No status line in time.
        assert isinstance(outcome, TransientProviderError), outcome
        assert "within 1 s" in str(outcome)
    else:
        # A status line and headers came: something answers there; the body is never read.
        assert outcome is None, outcome


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mode", sorted(RETRY_AFTER))
def test_every_retry_after_form_is_read_as_asked(server, kind, mode):
    error, _, _ = measured(lambda: complete(provider(server, kind, mode)))
    assert isinstance(error, TransientProviderError), error
    if mode == "ra-body" and kind != "gemini":
        assert error.retry_after is None  # only Gemini documents a delay in its body
    else:
        assert error.retry_after >= 86400


def test_the_reply_limit_is_an_option_checked_at_the_door(server):
    p = provider(server, "openai", "endless", max_reply_bytes="1MiB")
    assert p.describe()["max_reply_bytes"] == 1 << 20
    assert "max_reply_bytes" not in provider(server, "openai", "ok").describe()
    error, _, peak = measured(lambda: complete(p))
    assert "limit of 1,048,576 bytes" in str(error)
    assert peak < 16 << 20
    for bad in ("lots", "0", "2GiB", "12", True, 2.5):
        with pytest.raises(InvalidArgument, match="^openai: max_reply_bytes=.* whole number"):
            provider(server, "openai", "ok", max_reply_bytes=bad)
    big = provider(server, "openai", "ok", max_reply_bytes=DEFAULT_MAX_REPLY_BYTES * 4)
    assert big.max_reply_bytes == 32 << 20


# --- through the engine -----------------------------------------------------------

CASES = [
    Case("order", "Where is my order A-1042?", (contains("A-1042"),)),
    Case("refund", "I want a refund.", (contains("refund"),)),
    Case("hours", "When are you open?", (contains("9"),)),
]


def run_engine(tmp_path, p, **options):
    out = tmp_path / "run.jsonl"
    options = {"runs": 1, "timeout": 5.0, "backoff": 0.0, "retries": 3, **options}
    started = time.monotonic()
    outcome = engine.run(CASES, [engine.Variant("v", p)], out=out, progress=False, **options)
    return outcome, read_results(out).samples, time.monotonic() - started


#: Every wire with every Retry-After form it reads (only Gemini documents a delay in its body).
WAITS = [(k, m) for k in KINDS for m in sorted(RETRY_AFTER) if m != "ra-body" or k == "gemini"]


@pytest.mark.parametrize(("kind", "mode"), WAITS)
def test_a_wait_past_the_timeout_is_unmeasured_at_once_and_said_once(
    tmp_path, capsys, server, kind, mode
):
    p = provider(server, kind, mode, timeout=5.0)
    outcome, samples, seconds = run_engine(tmp_path, p)
    assert outcome.status == "finished"
    assert seconds < 10
    assert [s["status"] for s in samples] == ["unmeasured"] * len(CASES)
    for s in samples:
        assert s["attempts"] == 1  # asked to wait that long: not retried
        assert "the service asked to wait" in s["reason"]
        assert "longer than the run's timeout (5 s)" in s["reason"]
    lines = capsys.readouterr().err.splitlines()
    said = [line for line in lines if "asked to wait" in line]
    assert len(said) == 1, lines
    assert said[0].startswith("evalstats: the service asked to wait")
    assert said[0].endswith("such samples are recorded unmeasured, without waiting")


def test_a_wait_within_the_timeout_is_honoured(monkeypatch):
    waits = []

    async def sleep(seconds):
        waits.append(seconds)

    monkeypatch.setattr(engine, "_sleep", sleep)
    assert engine._wait_refused(5.0, 5.0) is None
    assert engine._wait_refused(599.0, None) is None
    assert "the run's timeout (5 s)" in engine._wait_refused(5.5, 5.0)
    assert "the longest evalstats waits (600 s)" in engine._wait_refused(601.0, None)
    assert "1e+308 s" in engine._wait_refused(1e308, 60.0)
    calls = iter([TransientProviderError("429", retry_after=4.0)])

    async def flaky():
        for error in calls:
            raise error
        return "fine"

    e = engine._Engine(
        cases={}, variants={}, seed=0, timeout=5.0, retries=3, backoff=0.0, concurrency=1
    )
    attempts = asyncio.run(e._with_retries(flaky))
    assert attempts.result == "fine" and waits == [4.0]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mode", ["huge", "gzip-bomb", "trickle"])
def test_a_misbehaving_body_makes_samples_unmeasured_never_incomplete(tmp_path, server, kind, mode):
    p = provider(server, kind, mode, timeout=5.0)
    outcome, samples, seconds = run_engine(tmp_path, p, timeout=0.5, retries=1)
    assert outcome.status == "finished"
    assert seconds < 15
    assert [s["status"] for s in samples] == ["unmeasured"] * len(CASES)
    word = "timed out after 0.5 s" if mode == "trickle" else "max_reply_bytes"
    assert all(word in s["reason"] and s["attempts"] == 2 for s in samples), samples


def test_a_service_asking_to_wait_at_the_start_stops_the_run_in_one_line(tmp_path, server):
    p = provider(server, "ollama", "setup-ra-seconds", timeout=5.0)
    with pytest.raises(TransientProviderError, match="asked to wait 99,999,999 s") as info:
        run_engine(tmp_path, p)
    assert "\n" not in str(info.value)


# --- through the command line -------------------------------------------------------

SUITE = {
    "name": "hostile",
    "cases": [
        {"id": "order", "prompt": "Where is my order A-1042?", "checks": [{"contains": "A-1042"}]},
        {"id": "refund", "prompt": "I want a refund.", "checks": [{"contains": "refund"}]},
    ],
}
#: The largest resident set an ``evalstats run`` may reach against a hostile server.
RSS_LIMIT = 200 << 20
#: Seconds a command may take before the test calls it a hang.
COMMAND_LIMIT = 45.0


#: ``evalstats`` as a child process that writes its own peak resident set size
#: (``VmHWM``, counted from its own start: the ``wait4`` and ``getrusage`` figures
#: would include the memory of the test process it was forked from) to argv[1].
PEAK_REPORTING_EVALSTATS = """
import atexit, sys
def report(path=sys.argv[1]):
    with open("/proc/self/status") as status:
        kib = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    with open(path, "w") as out:
        out.write(str(kib * 1024))
atexit.register(report)
from evalstats.cli import main
sys.exit(main(sys.argv[2:]))
"""


def evalstats_run(tmp_path, variant, *extra):
    """Run ``evalstats run`` in its own process: ``(exit code, stderr, peak RSS in bytes, out)``."""
    if not os.path.exists("/proc/self/status"):
        pytest.skip("the peak resident set size is read from /proc")
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps(SUITE))
    out, peak = tmp_path / "out.jsonl", tmp_path / "peak"
    argv = [sys.executable, "-c", PEAK_REPORTING_EVALSTATS, str(peak), "run", str(suite)]
    argv += ["--variant", variant, "--out", str(out), "--runs", "1", "--no-progress", *extra]
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_BASE_URL", "OLLAMA_HOST"))}
    with subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=tmp_path
    ) as proc:
        try:
            _, err = proc.communicate(timeout=COMMAND_LIMIT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise AssertionError(
                f"evalstats run still going after {COMMAND_LIMIT} s: a hang"
            ) from None
    return proc.returncode, err.decode(), int(peak.read_text()), out


def variant(server, kind, mode, **settings):
    spec = f"v={kind}:m,base_url={server.base_url(kind, mode)}"
    return spec + "".join(f",{k}={v}" for k, v in settings.items())


def no_traceback(err):
    assert "Traceback" not in err and "Error:" not in err.replace("ProviderError:", ""), err


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_run_against_a_2_gib_body_records_unmeasured_in_bounded_memory(tmp_path, server, kind):
    code, err, rss, out = evalstats_run(
        tmp_path, variant(server, kind, "huge-close"), "--timeout", "5", "--retries", "1"
    )
    no_traceback(err)
    assert code == 0, err
    assert rss < RSS_LIMIT, f"{rss / 2**20:.0f} MiB"
    samples = read_results(out).samples
    assert [s["status"] for s in samples] == ["unmeasured", "unmeasured"]
    assert all("max_reply_bytes" in s["reason"] for s in samples)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_run_told_to_wait_a_day_is_not_put_to_sleep(tmp_path, server, kind):
    started = time.monotonic()
    code, err, _, out = evalstats_run(tmp_path, variant(server, kind, "ra-503"), "--timeout", "5")
    no_traceback(err)
    assert code == 0, err
    assert time.monotonic() - started < 30
    lines = err.splitlines()
    assert len(lines) == 1 and "asked to wait 86,400 s" in lines[0], lines
    samples = read_results(out).samples
    assert [s["status"] for s in samples] == ["unmeasured", "unmeasured"]
    assert all("longer than the run's timeout (5 s)" in s["reason"] for s in samples)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["setup-endless", "setup-huge", "setup-trickle"])
def test_run_past_a_hostile_endpoint_check_is_bounded(tmp_path, server, mode):
    # The check reads headers only, so the run goes on to well-formed samples.
    code, err, rss, out = evalstats_run(tmp_path, variant(server, "openai", mode))
    no_traceback(err)
    assert code == 0, err
    assert rss < RSS_LIMIT, f"{rss / 2**20:.0f} MiB"
    assert [s["status"] for s in read_results(out).samples] == ["completed", "completed"]


@pytest.mark.slow
def test_run_against_a_redirect_stops_in_one_line(tmp_path, server):
    code, err, _, out = evalstats_run(tmp_path, variant(server, "anthropic", "redirect"))
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 1 and "HTTP 307" in lines[0] and "redirects to" in lines[0], lines
    # Nothing was measured, so no file is left to refuse the corrected rerun.
    assert not out.exists()


@pytest.mark.slow
@pytest.mark.parametrize("form", ["credentials", "crlf"])
def test_run_refuses_a_base_url_with_credentials_or_line_breaks(tmp_path, server, form):
    url = server.base_url("openai", "echo")
    if form == "credentials":
        url = url.replace("//", "//user:SECRET-pw@", 1)
    else:
        url += "\r\nX-Evil: 1"
    code, err, _, out = evalstats_run(tmp_path, f"v=openai:m,base_url={url}")
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("evalstats: "), lines
    assert "Traceback" not in err
    if form == "credentials":
        # The provider's own words never repeat the password (the variant parser
        # quotes the whole spec, as typed, before them).
        assert "base_url='http://***@127.0.0.1:" in err and "holds a user name" in err
    else:
        assert "holds the character U+000D" in err
    assert not out.exists()
    assert server.requests("echo", "openai") == 0  # nothing was sent anywhere
