"""evalstats standin serve: the stand-ins over HTTP."""

from __future__ import annotations

import argparse

EXAMPLES = (
    "evalstats standin serve --port 8000",
    "evalstats standin serve --latency-ms 50:200 --error-rate 0.05",
    "evalstats standin serve --batch-delay-s 5 --batch-expire-rate 0.1",
)


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "action",
        choices=["serve"],
        help="serve: the stand-ins shop-v1, shop-v2 and notes over HTTP (OpenAI at /v1, "
        "Ollama at /api)",
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="a loopback address to listen on (127.0.0.1); no other host is allowed",
    )
    p.add_argument("--port", type=int, default=0, help="port; 0 picks a free one (0)")
    p.add_argument(
        "--latency-ms",
        default="0",
        metavar="MS|LOW:HIGH",
        help="delay before each answer: fixed, or uniform between LOW and HIGH (0)",
    )
    p.add_argument(
        "--error-rate",
        type=float,
        default=0.0,
        help="share of chat requests that fail, half 429 and half 500 (0)",
    )
    p.add_argument(
        "--retry-after", type=int, default=1, help="whole seconds a 429 asks the client to wait (1)"
    )
    p.add_argument(
        "--hang-rate",
        type=float,
        default=0.0,
        help="share of chat requests that stall for --hang-s more seconds (0)",
    )
    p.add_argument("--hang-s", type=float, default=5.0, help="length of a stall in seconds (5)")
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the faults and of answers to requests without a seed (0)",
    )
    p.add_argument(
        "--batch-delay-s",
        type=float,
        default=0.0,
        help="seconds until a batch (OpenAI, Anthropic or Gemini batch API) ends (0)",
    )
    p.add_argument(
        "--batch-error-rate",
        type=float,
        default=0.0,
        help="share of batch requests that error (0)",
    )
    p.add_argument(
        "--batch-expire-rate",
        type=float,
        default=0.0,
        help="share of batch requests that expire; a batch holding one ends expired (0)",
    )
    p.add_argument(
        "--batch-never-ends",
        action="store_true",
        help="batches stay in progress until cancelled (for tests of time limits)",
    )
    p.add_argument(
        "--notes",
        action="append",
        default=[],
        metavar="KNOB=RATE",
        help="a knob of the notes model: p_read, p_read_revised, p_stop_early, "
        "p_text_call, p_obey_note (repeat, or join with commas; defaults 0.5, 0.9, "
        "0.2, 0.1, 0.3)",
    )


def run(args: argparse.Namespace) -> int:
    from ..demo._notes import parse_notes_knobs
    from ..demo._server import serve_until_signal

    return serve_until_signal(
        args.host,
        args.port,
        latency_ms=args.latency_ms,
        error_rate=args.error_rate,
        retry_after=args.retry_after,
        hang_rate=args.hang_rate,
        hang_s=args.hang_s,
        seed=args.seed,
        notes=parse_notes_knobs(args.notes) if args.notes else None,
        batch_delay_s=args.batch_delay_s,
        batch_error_rate=args.batch_error_rate,
        batch_expire_rate=args.batch_expire_rate,
        batch_never_ends=args.batch_never_ends,
    )
