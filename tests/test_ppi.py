"""PPI++ corrected pass rates and paired differences (evalstats.stats._ppi)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import levels

from evalstats import InvalidArgument, ppi_diff, ppi_pass_rate
from evalstats.stats._intervals import _z


def _ppi_py():
    """``ppi_py``, or skip. Its numba dependency imports ``coverage`` when it can; a
    module of that name that is not coverage.py (found on a worker's path) breaks
    that import, so such a module is hidden while ppi_py loads."""
    found = sys.modules.get("coverage")
    try:
        import coverage

        foreign = not hasattr(coverage, "types")
    except ImportError:
        foreign = False
    if foreign:
        sys.modules["coverage"] = None  # type: ignore[assignment]
    try:
        return pytest.importorskip("ppi_py")
    finally:
        if foreign:
            if found is None:
                del sys.modules["coverage"]
            else:
                sys.modules["coverage"] = found


def _draw(rng: np.random.Generator, size: int, p: float, se: float, sp: float, reviewed: int):
    truth = rng.random(size) < p
    u = rng.random(size)
    auto = np.where(truth, u < se, u >= sp)
    mask = np.zeros(size, dtype=bool)
    mask[rng.choice(size, reviewed, replace=False)] = True
    return truth, auto, mask


# --- against the independent ppi_py package ---------------------------------------


def test_wald_matches_ppi_py_on_a_grid_of_random_inputs() -> None:
    ppi_py = _ppi_py()
    rng = np.random.default_rng(20231103)
    checked = 0
    for _ in range(150):
        size = int(rng.integers(25, 600))
        reviewed = int(rng.integers(10, size))
        p, se, sp = rng.random(), rng.uniform(0.3, 1), rng.uniform(0.3, 1)
        truth, auto, mask = _draw(rng, size, p, se, sp, reviewed)
        level = float(rng.choice([0.8, 0.9, 0.95, 0.99]))
        y, yhat, rest = (x.astype(float) for x in (truth[mask], auto[mask], auto[~mask]))
        # ppi_py.ppi_mean_ci with lam=None: power-tuned PPI++ (Angelopoulos, Duchi & Zrnic 2023)
        low, high = ppi_py.ppi_mean_ci(y, yhat, rest, alpha=1 - level)
        estimate = ppi_py.ppi_mean_pointestimate(y, yhat, rest)
        if not np.isfinite([low[0], high[0], estimate[0]]).all():
            continue  # ppi_py is undefined when every automatic verdict is the same
        ours = ppi_pass_rate(auto, mask, truth, level=level, method="wald")
        assert ours.estimate == pytest.approx(np.clip(estimate[0], 0, 1), abs=1e-6)
        assert ours.low == pytest.approx(np.clip(low[0], 0, 1), abs=1e-6)
        assert ours.high == pytest.approx(np.clip(high[0], 0, 1), abs=1e-6)
        checked += 1
    assert checked > 140


def test_diff_wald_matches_ppi_py_on_the_pair_differences() -> None:
    ppi_py = _ppi_py()
    rng = np.random.default_rng(7)
    for _ in range(60):
        size = int(rng.integers(30, 400))
        reviewed = int(rng.integers(10, size))
        ya, aa, mask = _draw(rng, size, rng.random(), 0.85, 0.8, reviewed)
        yb, ab, _ = _draw(rng, size, rng.random(), 0.9, 0.7, reviewed)
        d, dhat = (yb.astype(float) - ya), (ab.astype(float) - aa)
        low, high = ppi_py.ppi_mean_ci(d[mask], dhat[mask], dhat[~mask], alpha=0.05)
        estimate = ppi_py.ppi_mean_pointestimate(d[mask], dhat[mask], dhat[~mask])
        ours = ppi_diff(aa, ab, mask, ya, yb, method="wald")
        assert ours.difference
        assert ours.estimate == pytest.approx(estimate[0], abs=1e-6)
        assert ours.low == pytest.approx(max(low[0], -1), abs=1e-6)
        assert ours.high == pytest.approx(min(high[0], 1), abs=1e-6)


# --- the score interval at the effective number of reviews -----------------------------


def _table(cells: tuple[int, int, int, int], unreviewed: tuple[int, int]):
    """auto, reviewed mask and human verdicts for a reviewed (person x judge) table
    ``(both pass, person only, judge only, both fail)`` and ``(passed, total)`` of the
    automatic verdicts on the unreviewed samples."""
    n11, n10, n01, n00 = cells
    passed, total = unreviewed
    human = [1] * (n11 + n10) + [0] * (n01 + n00) + [0] * total
    auto = [1] * n11 + [0] * n10 + [1] * n01 + [0] * n00 + [1] * passed + [0] * (total - passed)
    mask = [True] * sum(cells) + [False] * total
    return auto, mask, human


@pytest.mark.parametrize(
    ("cells", "unreviewed"),
    [
        ((6, 6, 4, 4), (400, 700)),  # uncorrelated: cov = 6/20 - (12/20)(10/20) = 0
        ((3, 9, 5, 3), (300, 980)),  # the judge disagrees with the person more than by chance
        ((12, 8, 0, 0), (500, 600)),  # the judge passed every reviewed answer
        ((7, 0, 0, 5), (0, 0)),  # every sample reviewed: nothing is left to impute
        ((40, 0, 0, 0), (90, 100)),  # the person passed every reviewed answer
    ],
)
@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
def test_a_judge_uncorrelated_in_the_sample_gives_the_wilson_interval(
    cells: tuple[int, int, int, int], unreviewed: tuple[int, int], level: float
) -> None:
    # lambda = 0: the reviewed answers alone, and the interval is Wilson's (1927) score
    # interval, statsmodels proportion_confint(method="wilson").
    from statsmodels.stats.proportion import proportion_confint

    auto, mask, human = _table(cells, unreviewed)
    k, n = cells[0] + cells[1], sum(cells)
    ci = ppi_pass_rate(auto, mask, human, level=level)
    low, high = proportion_confint(k, n, alpha=1 - level, method="wilson")
    assert ci.estimate == pytest.approx(k / n, abs=1e-12)
    assert ci.low == pytest.approx(low, abs=1e-12)
    assert ci.high == pytest.approx(high, abs=1e-12)
    assert "lambda=0;" in ci.note


def _by_hand(cells: tuple[int, int, int, int], unreviewed: tuple[int, int], z: float):
    """The method written out from the table's counts, apart from the code under test:
    ppi_py's power-tuned lambda (Angelopoulos, Duchi & Zrnic 2023, section 6) and
    estimate, and the variance of the estimate at that lambda and at 0 with z^2/4
    pseudo-reviews in each cell."""
    n = sum(cells)
    passed, big_n = unreviewed
    mu = passed / big_n

    def moments(c: float):
        n11, n10, n01, n00 = (x + c for x in cells)
        m = n11 + n10 + n01 + n00
        my, mh = (n11 + n10) / m, (n11 + n01) / m
        return m, my, mh, n11 / m - my * mh

    m, my, mh, cov = moments(0.0)
    pooled = (cells[0] + cells[2] + passed) / (n + big_n)
    var_all = (n + big_n) * pooled * (1 - pooled) / (n + big_n - 1)
    lam = min(max(cov / ((1 + n / big_n) * var_all), 0.0), 1.0)
    estimate = my + lam * (mu - mh)
    ma, ya, ha, cova = moments(z * z / 4)

    def variance(lam_: float) -> float:
        rect = ya * (1 - ya) + lam_**2 * ha * (1 - ha) - 2 * lam_ * cova
        return lam_**2 * mu * (1 - mu) / big_n + rect / ma

    return lam, estimate, n * variance(0.0) / variance(lam)


@pytest.mark.parametrize(
    ("cells", "unreviewed"),
    [((20, 3, 4, 13), (520, 960)), ((9, 6, 5, 10), (480, 970)), ((25, 1, 2, 2), (800, 950))],
)
def test_a_useful_judge_gives_wilson_at_the_effective_number_of_reviews(
    cells: tuple[int, int, int, int], unreviewed: tuple[int, int]
) -> None:
    # Korn & Graubard (1998): a binomial interval at the effective sample size, the
    # sample size over the design effect; here the design effect is the share of the
    # reviewed answers' variance that PPI++ leaves. Wilson's interval at a fractional
    # size is statsmodels proportion_confint(count, nobs, method="wilson") with
    # count = rate * nobs.
    from statsmodels.stats.proportion import proportion_confint

    auto, mask, human = _table(cells, unreviewed)
    lam, estimate, n_eff = _by_hand(cells, unreviewed, _z(0.95))
    assert 0 < lam < 1 and n_eff > sum(cells)
    ci = ppi_pass_rate(auto, mask, human)
    low, high = proportion_confint(estimate * n_eff, n_eff, alpha=0.05, method="wilson")
    assert ci.estimate == pytest.approx(estimate, abs=1e-12)
    assert (ci.low, ci.high) == pytest.approx((low, high), abs=1e-12)
    assert f"Wilson score at {n_eff:.1f} effective reviews" in ci.note
    assert f"lambda={lam:.3g};" in ci.note
    k, n = cells[0] + cells[1], sum(cells)
    assert ci.width < np.diff(proportion_confint(k, n, alpha=0.05, method="wilson"))[0]


def test_the_paired_difference_is_newcombes_when_every_pair_is_reviewed() -> None:
    # Newcombe (1998c), table III, first example: 36 pairs passed under both, 2 only
    # under A, 12 only under B, none under neither: +20% (0.0569 to 0.3404). Every pair
    # reviewed leaves nothing to impute (lambda = 0).
    ha = [1] * 36 + [1] * 2 + [0] * 12
    hb = [1] * 36 + [0] * 2 + [1] * 12
    ci = ppi_diff(hb, ha, [True] * 50, ha, hb)
    assert (round(ci.estimate, 4), round(ci.low, 4), round(ci.high, 4)) == (0.2, 0.0569, 0.3404)
    assert "lambda=0;" in ci.note


def test_the_paired_difference_with_an_uncorrelated_judge_is_newcombes() -> None:
    # A judge whose differences run against the person's gets lambda = 0: the
    # interval is paired_diff_ci's Newcombe (1998c) method 10 on the reviewed pairs.
    from evalstats import paired_diff_ci

    rng = np.random.default_rng(12)
    ya, _, mask = _draw(rng, 400, 0.6, 0.8, 0.8, 40)
    yb = np.where(rng.random(400) < 0.5, ya, rng.random(400) < 0.75)
    aa, ab = yb.copy(), ya.copy()  # the judge swaps the variants
    ci = ppi_diff(aa, ab, mask, ya, yb)
    assert "lambda=0;" in ci.note
    ra, rb = ya[mask], yb[mask]
    ref = paired_diff_ci(
        int((ra & rb).sum()), int((ra & ~rb).sum()), int((~ra & rb).sum()), int((~ra & ~rb).sum())
    )
    assert (ci.estimate, ci.low, ci.high) == pytest.approx(
        (ref.estimate, ref.low, ref.high), abs=1e-12
    )


def test_a_useful_judge_narrows_the_paired_difference() -> None:
    from evalstats import paired_diff_ci

    rng = np.random.default_rng(8)
    ya, aa, mask = _draw(rng, 1000, 0.6, 0.95, 0.95, 60)
    yb, ab, _ = _draw(rng, 1000, 0.75, 0.95, 0.95, 60)
    ci = ppi_diff(aa, ab, mask, ya, yb)
    ra, rb = ya[mask], yb[mask]
    ref = paired_diff_ci(
        int((ra & rb).sum()), int((ra & ~rb).sum()), int((~ra & rb).sum()), int((~ra & ~rb).sum())
    )
    assert ci.width < 0.8 * ref.width
    assert "Newcombe's paired score method at" in ci.note


def test_a_good_judge_narrows_the_interval_and_a_useless_one_does_not_mislead() -> None:
    from evalstats import proportion_ci

    rng = np.random.default_rng(3)
    truth, good, mask = _draw(rng, 1000, 0.7, 0.95, 0.95, 60)
    wilson = proportion_ci(int(truth[mask].sum()), 60)
    assert ppi_pass_rate(good, mask, truth).width < 0.75 * wilson.width
    useless = rng.random(1000) < 0.5
    ci = ppi_pass_rate(useless, mask, truth)
    assert ci.width < 1.25 * wilson.width
    assert ci.contains(truth[mask].mean())


def test_human_given_per_sample_or_per_review_is_the_same() -> None:
    rng = np.random.default_rng(11)
    truth, auto, mask = _draw(rng, 200, 0.6, 0.8, 0.8, 25)
    assert ppi_pass_rate(auto, mask, truth) == ppi_pass_rate(auto, mask, truth[mask])
    with_gaps = [t if m else None for t, m in zip(truth.tolist(), mask.tolist(), strict=True)]
    assert ppi_pass_rate(auto, mask, with_gaps) == ppi_pass_rate(auto, mask, truth)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    size=st.integers(20, 300),
    share=st.floats(0.05, 1.0),
    p=st.floats(0, 1),
    level=levels,
    method=st.sampled_from(["ppi++", "wald"]),
)
def test_interval_lies_in_0_1_and_contains_its_estimate(
    seed: int, size: int, share: float, p: float, level: float, method: str
) -> None:
    rng = np.random.default_rng(seed)
    reviewed = max(10, min(size, int(size * share)))
    truth, auto, mask = _draw(rng, size, p, 0.8, 0.7, reviewed)
    ci = ppi_pass_rate(auto, mask, truth, level=level, method=method)
    assert 0 <= ci.low <= ci.estimate <= ci.high <= 1


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), method=st.sampled_from(["ppi++", "wald"]))
def test_swapping_the_variants_negates_the_difference(seed: int, method: str) -> None:
    rng = np.random.default_rng(seed)
    ya, aa, mask = _draw(rng, 120, 0.5, 0.8, 0.8, 30)
    yb, ab, _ = _draw(rng, 120, 0.7, 0.9, 0.6, 30)
    ab_ci = ppi_diff(aa, ab, mask, ya, yb, method=method)
    ba_ci = ppi_diff(ab, aa, mask, yb, ya, method=method)
    assert ab_ci.estimate == pytest.approx(-ba_ci.estimate, abs=1e-12)
    assert ab_ci.low == pytest.approx(-ba_ci.high, abs=1e-12)
    assert -1 <= ab_ci.low <= ab_ci.estimate <= ab_ci.high <= 1


# --- a reviewed subset drawn within strata -------------------------------------------


def test_stratified_estimate_is_exactly_unbiased_over_every_possible_draw() -> None:
    # Exact enumeration: a population of 16 samples in strata of 4, 5 and 7, two
    # reviewed from each (6 * 10 * 21 = 1,260 equally likely draws). At a fixed
    # lambda the stratum-weighted estimate averages to the population's mean
    # verdict exactly (Cochran 1977, section 5.2: the stratified mean is
    # unbiased); the unweighted one does not, because a sample of the small
    # stratum is reviewed more often.
    import itertools

    from evalstats.stats._ppi import _core, _stratum_weights

    y = np.array([1, 1, 0, 1, 0, 0, 1, 0, 0, 1, 1, 1, 0, 1, 1, 0], float)
    f = np.array([1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 1], float)
    strata = ["a"] * 4 + ["b"] * 5 + ["c"] * 7
    members = [[i for i, s in enumerate(strata) if s == h] for h in "abc"]
    for lam in (0.0, 0.6, 1.0):
        weighted, unweighted = [], []
        for draw in itertools.product(*(itertools.combinations(m, 2) for m in members)):
            mask = np.zeros(16, dtype=bool)
            mask[[i for pair in draw for i in pair]] = True
            d, e, groups = _stratum_weights(strata, mask)
            assert groups == 3
            rows = (y[mask], f[mask], np.ones(6), f[~mask])
            weighted.append(_core(*rows, design=d, design_unlabeled=e, lam=lam)[0])
            unweighted.append(_core(*rows, lam=lam)[0])
        assert len(weighted) == 6 * 10 * 21
        assert np.mean(weighted) == pytest.approx(y.mean(), abs=1e-12)
        assert abs(np.mean(unweighted) - y.mean()) > 0.005


def test_strata_of_equal_share_change_nothing() -> None:
    # Strata of 50 with 10 reviewed each: every weight is 1, the unweighted estimator.
    rng = np.random.default_rng(5)
    truth, auto, _ = _draw(rng, 200, 0.6, 0.8, 0.7, 10)
    strata = np.repeat(["w", "x", "y", "z"], 50)
    mask = np.zeros(200, dtype=bool)
    for h in range(4):
        mask[h * 50 + rng.choice(50, 10, replace=False)] = True
    for method in ("ppi++", "wald"):
        plain = ppi_pass_rate(auto, mask, truth, method=method)
        by = ppi_pass_rate(auto, mask, truth, method=method, strata=strata)
        assert (by.estimate, by.low, by.high) == pytest.approx(
            (plain.estimate, plain.low, plain.high), abs=1e-12
        )
        assert "drawn within 4 strata" in by.note
    pairs = ppi_diff(auto, truth, mask, truth, auto, strata=strata)
    plain_pairs = ppi_diff(auto, truth, mask, truth, auto)
    assert pairs.low == pytest.approx(plain_pairs.low, abs=1e-12)


def test_a_small_stratum_weighs_by_its_share_of_the_samples() -> None:
    # Stratum "s" (20 samples) all pass, stratum "b" (180) all fail; 10 reviewed of
    # each, and a judge that passes everything (lambda = 0: the reviews alone).
    # The person's rate is 20/200 = 10% (the stratified mean, Cochran 1977,
    # eq. 5.1: 0.1 * 1 + 0.9 * 0); the unweighted mean of the reviews says 50%.
    strata = ["s"] * 20 + ["b"] * 180
    truth = [True] * 20 + [False] * 180
    mask = [i < 10 or 20 <= i < 30 for i in range(200)]
    ci = ppi_pass_rate([True] * 200, mask, truth, method="wald", strata=strata)
    assert ci.estimate == pytest.approx(0.1, abs=1e-12)
    plain = ppi_pass_rate([True] * 200, mask, truth, method="wald")
    assert plain.estimate == pytest.approx(0.5, abs=1e-12)


def test_a_stratified_review_without_help_from_the_judge_is_wilson_at_korn_graubards_size() -> None:
    # Stratum "s" (20 samples, 10 reviewed, 7 pass) and "b" (180, 10 reviewed, 4 pass);
    # a judge that passes everything gets lambda = 0. The estimate is the stratified
    # mean 0.1 * 0.7 + 0.9 * 0.4 = 0.43 (Cochran 1977, eq. 5.1); the interval is
    # Wilson's at Korn & Graubard's (1998) effective size p(1 - p) / v, with v the
    # variance of the weighted mean (weights N_h / n_h, as if drawn with replacement),
    # written out here; statsmodels proportion_confint(method="wilson") at that size.
    from statsmodels.stats.proportion import proportion_confint

    strata = ["s"] * 20 + ["b"] * 180
    mask = [i < 10 or 20 <= i < 30 for i in range(200)]
    truth = [i < 7 or 20 <= i < 24 for i in range(200)]
    ci = ppi_pass_rate([True] * 200, mask, truth, strata=strata)
    w = np.array([2.0] * 10 + [18.0] * 10)  # N_h / n_h of the reviewed samples
    y = np.array([1.0] * 7 + [0.0] * 3 + [1.0] * 4 + [0.0] * 6)
    p = float((w * y).sum() / w.sum())
    v = float((w**2 * (y - p) ** 2).sum() / w.sum() ** 2)
    size = min(p * (1 - p) / v, 20.0)
    assert p == pytest.approx(0.43, abs=1e-12)
    assert 1 < size < 20  # the weights cost reviews
    low, high = proportion_confint(p * size, size, alpha=0.05, method="wilson")
    assert (ci.estimate, ci.low, ci.high) == pytest.approx((p, low, high), abs=1e-12)
    assert "lambda=0;" in ci.note


def test_strata_without_a_review_or_of_the_wrong_length_are_refused() -> None:
    auto = [True, False] * 20
    mask = [i < 20 for i in range(40)]
    with pytest.raises(InvalidArgument, match=r"strata='late' has 20 samples and none reviewed"):
        ppi_pass_rate(auto, mask, auto, strata=["early"] * 20 + ["late"] * 20)
    with pytest.raises(InvalidArgument, match=r"strata must give one stratum .* per sample \(40\)"):
        ppi_pass_rate(auto, mask, auto, strata=["early"] * 39)
    with pytest.raises(InvalidArgument, match=r"strata must hold labels"):
        ppi_diff(auto, auto, mask, auto, auto, strata=[{"case": 1}] * 40)


# --- bad input ---------------------------------------------------------------------


def test_fewer_than_ten_reviewed_is_refused() -> None:
    auto = [True] * 50
    mask = [i < 9 for i in range(50)]
    with pytest.raises(InvalidArgument, match=r"reviewed=9 .*at least 10"):
        ppi_pass_rate(auto, mask, auto)
    with pytest.raises(InvalidArgument, match=r"reviewed=9"):
        ppi_diff(auto, auto, mask, auto, auto)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([True] * 20, [True] * 19, [True] * 20), r"reviewed_mask must be one True/False per"),
        (([True] * 20, [True] * 20, [True] * 7), r"human must give the person's verdict"),
        (([True] * 19 + [2], [True] * 20, [True] * 20), r"auto\[19\]=2 must be a verdict"),
        (([True] * 20, [True] * 20, ["yes"] * 20), r"human must hold verdicts"),
    ],
)
def test_bad_input_names_the_argument(args: tuple, message: str) -> None:
    with pytest.raises(InvalidArgument, match=message):
        ppi_pass_rate(*args)


def test_unknown_method_suggests_the_closest() -> None:
    with pytest.raises(InvalidArgument, match="ppi"):
        ppi_pass_rate([True] * 20, [True] * 20, [True] * 20, method="ppi+")


# --- the simulation, reduced ----------------------------------------------------------


def _simulation():
    from simulation import load

    return load("ppi_coverage")


@pytest.mark.slow
def test_coverage_and_width_hold_in_a_reduced_simulation() -> None:
    sim = _simulation()
    # 1,000 experiments each, so the Monte Carlo standard error of a 95% coverage is
    # about 0.7 points: coverage of at least 94% less two of them. The hardest corner
    # of the grid for coverage (few reviews, a judge of high sensitivity and low
    # specificity, a rate of 0.5), a sharp judge at a high rate, the weak judge
    # (sensitivity 0.7, specificity 0.6), and the width goal's setting.
    rows = {
        key: sim.pass_rate_row(*key, experiments=1000, seed=1)
        for key in [
            (0.5, 0.95, 0.6, 30),
            (0.8, 0.95, 0.95, 30),
            (0.5, 0.7, 0.6, 30),
            (0.5, 0.9, 0.9, 50),
        ]
    }
    for row in rows.values():
        assert row.coverage >= 0.926, row
    # a weak judge still narrows the interval (full simulation: 0.96 to 0.98) ...
    assert rows[(0.5, 0.7, 0.6, 30)].width_ratio < 1, rows[(0.5, 0.7, 0.6, 30)]
    # ... and a good one by a fifth or more (the goal: at most 0.8; full simulation 0.70)
    assert rows[(0.5, 0.9, 0.9, 50)].width_ratio <= 0.8, rows[(0.5, 0.9, 0.9, 50)]
    for se, sp in [(0.7, 0.6), (0.9, 0.9)]:
        diff = sim.diff_row(0.6, 0.75, se, sp, 30, experiments=300, seed=1)
        assert diff.coverage >= 0.92, diff
        assert diff.width_ratio < 1, diff


def _stratified_simulation():
    from simulation import load

    return load("ppi_stratified")


@pytest.mark.slow
def test_coverage_holds_for_a_review_stratified_by_case_in_a_reduced_simulation() -> None:
    sim = _stratified_simulation()
    # 300 experiments each (Monte Carlo standard error of a 95% coverage about
    # 1.3 points): cases of one size (self-weighting) and of unequal sizes
    # (weighted by case), a weak and a good judge, 30 reviewed.
    for run, se, sp in [
        (sim.equal_run(), 0.9, 0.9),
        (sim.unequal_run(), 0.7, 0.6),
        (sim.unequal_run(), 0.95, 0.6),
    ]:
        row = sim.stratified_row(run, se, sp, 30, experiments=300, seed=3)
        assert row.coverage >= 0.92, row
        if row.unweighted_coverage is not None:
            # ignoring the design (no case weights) misses the run's rate
            assert row.unweighted_coverage <= 0.9, row


def _exact_simulation():
    from simulation import load

    return load("ppi_exact")


def test_the_exact_enumeration_computes_the_library_interval() -> None:
    # simulations/ppi_exact.py writes the interval out for arrays of tables; it must be
    # ppi_pass_rate's, on random tables and on the edge cases (lambda = 0, a judge that
    # agrees with every review, a person who passes every review).
    sim = _exact_simulation()
    rng = np.random.default_rng(2024)
    cases = [((6, 6, 4, 4), (400, 700)), ((20, 0, 0, 10), (500, 970)), ((40, 0, 0, 0), (900, 960))]
    for _ in range(60):
        n = int(rng.integers(10, 120))
        cells = tuple(int(c) for c in rng.multinomial(n, rng.dirichlet([1, 1, 1, 1])))
        total = int(rng.integers(1, 1500))
        cases.append((cells, (int(rng.integers(0, total + 1)), total)))
    for cells, (passed, total) in cases:
        auto, mask, human = _table(cells, (passed, total))
        ci = ppi_pass_rate(auto, mask, human)
        estimate, low, high = sim.intervals(
            *(np.array([float(c)]) for c in cells), np.array([float(passed)]), total
        )
        assert (estimate[0], low[0], high[0]) == pytest.approx(
            (ci.estimate, ci.low, ci.high), abs=1e-12
        )


@pytest.mark.slow
def test_exact_coverage_and_width_at_the_weak_judge() -> None:
    # Exact enumeration (no Monte Carlo error): the weak judge of the grid
    # (sensitivity 0.7, specificity 0.6) and the judge of high sensitivity and low
    # specificity, 30 and 50 reviewed of 1,000, a rate of 0.5 (the lowest coverage of
    # the grid: 94.75% and 94.74% for the weak judge): at least 94% at nominal 95%, and
    # narrower than the reviewed answers' own Wilson interval.
    sim = _exact_simulation()
    for se, sp, n in [(0.7, 0.6, 30), (0.95, 0.6, 30), (0.7, 0.6, 50)]:
        row = sim.exact_row(0.5, se, sp, n)
        assert row.coverage >= 0.94, row
        assert row.width_ratio < 1, row
        assert row.left_out < 1e-6, row
