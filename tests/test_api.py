"""The public surface changes only on purpose."""

from __future__ import annotations

import evalstats

EXPECTED = [
    "CaseFileError",
    "EvalStatsError",
    "Interval",
    "InvalidArgument",
    "ProviderError",
    "ResultsFileError",
    "TransientProviderError",
    "Verdict",
    "__version__",
]


def test_all_is_sorted_and_expected() -> None:
    assert evalstats.__all__ == sorted(evalstats.__all__)
    assert evalstats.__all__ == EXPECTED


def test_every_name_is_importable() -> None:
    for name in evalstats.__all__:
        assert hasattr(evalstats, name), name


def test_invalid_argument_is_a_value_error() -> None:
    assert issubclass(evalstats.InvalidArgument, ValueError)
    assert issubclass(evalstats.TransientProviderError, evalstats.ProviderError)
