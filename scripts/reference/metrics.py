#!/usr/bin/env python3
"""Reference vectors for ratio (delta method), capping and quantile metrics: test/vectors/metric-stats.json.

Run: python3 scripts/reference/metrics.py  (numpy 2.4, SciPy 1.17). Every input is generated here from a fixed seed
and written into the JSON with the expected values, so the TypeScript tests read both from the file. The expected
values are computed from the per-user arrays directly (two-pass numpy moments, numpy.quantile, scipy.stats), an
independent path from src/stats, which works from sufficient statistics and its own quantile code.
Formulas: docs/statistics.md, "Ratio metrics", "Capping", "Quantile metrics".
"""
import json
import math
import pathlib

import numpy as np
import scipy
from scipy import stats

OUT = pathlib.Path(__file__).resolve().parents[2] / 'test' / 'vectors' / 'metric-stats.json'
HTTP_OUT = OUT.parent / 'metric-definitions-http.json'


def sums(x, y):
    """Sufficient statistics of one variant, each sum exact to the last bit (math.fsum)."""
    return {
        'n': int(len(x)),
        'sum_x': math.fsum(x), 'sum_y': math.fsum(y),
        'sum_x2': math.fsum(x * x), 'sum_y2': math.fsum(y * y), 'sum_xy': math.fsum(x * y),
    }


def delta_ratio(x, y):
    """Ratio of means and its delta-method variance from the per-user arrays (Deng et al. 2018, eq. for x̄/ȳ)."""
    n = len(x)
    mx, my = np.mean(x), np.mean(y)
    cov = np.cov(x, y, ddof=1)
    r = mx / my
    var = (cov[0, 0] - 2 * r * cov[0, 1] + r * r * cov[1, 1]) / (n * my * my)
    return float(r), float(var)


def ratio_case(name, xc, yc, xt, yt, level):
    rc, vc = delta_ratio(xc, yc)
    rt, vt = delta_ratio(xt, yt)
    nc, nt = len(xc), len(xt)
    d = rt - rc
    se = math.sqrt(vc + vt)
    df = (vc + vt) ** 2 / (vc ** 2 / (nc - 1) + vt ** 2 / (nt - 1))
    tstat = d / se
    q = stats.t.ppf(1 - (1 - level) / 2, df)
    rel = rt / rc - 1
    se_rel = math.sqrt(vt / rc ** 2 + rt ** 2 * vc / rc ** 4)
    return {
        'name': name,
        'confidence_level': level,
        'control': sums(xc, yc),
        'treatment': sums(xt, yt),
        'expected': {
            'control_ratio': rc, 'control_variance': vc,
            'treatment_ratio': rt, 'treatment_variance': vt,
            'difference': d, 'std_error': se, 't': tstat, 'df': df,
            'p_value': float(2 * stats.t.sf(abs(tstat), df)),
            'ci_lower': d - q * se, 'ci_upper': d + q * se,
            'relative_lift': rel, 'relative_std_error': se_rel,
            'relative_ci_lower': rel - q * se_rel, 'relative_ci_upper': rel + q * se_rel,
        },
    }


def ratio_cases(rng):
    cases = []
    # Revenue per session: sessions ~ 1 + Poisson(2), revenue a sum of lognormal order values on ~30% of sessions.
    def revenue_per_session(n, lift):
        sessions = 1 + rng.poisson(2.0, n)
        orders = rng.binomial(sessions, 0.3)
        revenue = np.array([np.round(rng.lognormal(3.0, 0.8, k).sum(), 2) for k in orders]) * lift
        return np.round(revenue, 2), sessions.astype(float)
    xc, yc = revenue_per_session(4000, 1.0)
    xt, yt = revenue_per_session(4100, 1.06)
    cases.append(ratio_case('revenue_per_session', xc, yc, xt, yt, 0.95))
    # Clicks per page view: page views ~ 1 + geometric, clicks ~ Binomial(page views, rate).
    def clicks_per_view(n, rate):
        views = rng.geometric(0.2, n).astype(float)
        clicks = rng.binomial(views.astype(int), rate).astype(float)
        return clicks, views
    xc, yc = clicks_per_view(2500, 0.10)
    xt, yt = clicks_per_view(2400, 0.11)
    cases.append(ratio_case('clicks_per_page_view', xc, yc, xt, yt, 0.90))
    # A small, nearly null case at 99%.
    xc, yc = clicks_per_view(60, 0.3)
    xt, yt = clicks_per_view(75, 0.3)
    cases.append(ratio_case('small_sample', xc, yc, xt, yt, 0.99))
    return cases


def mean_cases(rng):
    """Ratios with denominator 1 for every user: Welch's t-test of the means (scipy.stats.ttest_ind)."""
    out = []
    for n_c, n_t, level in [(300, 280, 0.95), (40, 55, 0.80)]:
        xc = np.round(rng.gamma(2.0, 5.0, n_c), 3)
        xt = np.round(rng.gamma(2.2, 5.0, n_t), 3)
        res = stats.ttest_ind(xt, xc, equal_var=False)
        ci = res.confidence_interval(level)
        out.append({
            'name': f'mean_{n_c}_{n_t}', 'confidence_level': level,
            'control': sums(xc, np.ones(n_c)), 'treatment': sums(xt, np.ones(n_t)),
            'expected': {'difference': float(np.mean(xt) - np.mean(xc)), 't': float(res.statistic),
                         'df': float(res.df), 'p_value': float(res.pvalue),
                         'ci_lower': float(ci.low), 'ci_upper': float(ci.high)},
        })
    return out


def capping_cases(rng):
    out = []
    groups = [np.round(rng.lognormal(2.0, 1.2, 150), 2), np.round(rng.lognormal(2.1, 1.2, 170), 2)]
    groups[1][:3] = [5000.0, 12000.5, 830.25]  # outlier orders
    for capping in [{'type': 'percentile', 'p': 0.99}, {'type': 'percentile', 'p': 0.9}, {'type': 'percentile', 'p': 0.999},
                    {'type': 'absolute', 'value': 100.0}]:
        pooled = np.concatenate(groups)
        cap = float(np.quantile(pooled, capping['p'], method='linear')) if capping['type'] == 'percentile' else capping['value']
        capped = [np.minimum(g, cap) for g in groups]
        out.append({
            'capping': capping,
            'groups': [g.tolist() for g in groups],
            'expected': {
                'cap': cap,
                'capped_counts': [int((g > cap).sum()) for g in groups],
                'capped_sums': [math.fsum(g) for g in capped],
                'capped_sums_of_squares': [math.fsum(g * g) for g in capped],
            },
        })
    return out


def quantile_arm(values, p, level):
    n = len(values)
    z = stats.norm.ppf(1 - (1 - level) / 2)
    s = np.sort(values)
    lo = math.floor(n * p - z * math.sqrt(n * p * (1 - p)))
    hi = math.ceil(n * p + z * math.sqrt(n * p * (1 - p)))
    q = float(np.quantile(values, p, method='linear'))
    return {'n': n, 'quantile': q, 'lower_rank': lo, 'upper_rank': hi, 'lower': float(s[lo - 1]), 'upper': float(s[hi - 1]),
            'std_error': float((s[hi - 1] - s[lo - 1]) / (2 * z))}


def quantile_cases(rng):
    out = []
    # Page load times (ms), lognormal; treatment slower in the tail.
    c = np.round(rng.lognormal(6.5, 0.5, 900), 1)
    t = np.round(rng.lognormal(6.5, 0.58, 950), 1)
    # Order values with many repeats (ties).
    oc = np.round(rng.choice([9.99, 19.99, 24.5, 49.0, 99.0], 600, p=[0.3, 0.3, 0.2, 0.15, 0.05]) * rng.integers(1, 4, 600), 2)
    ot = np.round(rng.choice([9.99, 19.99, 24.5, 49.0, 99.0], 640, p=[0.25, 0.3, 0.2, 0.17, 0.08]) * rng.integers(1, 4, 640), 2)
    for name, (vc, vt), p, level in [('load_time_p50', (c, t), 0.5, 0.95), ('load_time_p90', (c, t), 0.9, 0.95),
                                     ('load_time_p99', (c, t), 0.99, 0.9), ('order_value_p75', (oc, ot), 0.75, 0.95)]:
        ac, at = quantile_arm(vc, p, level), quantile_arm(vt, p, level)
        z = stats.norm.ppf(1 - (1 - level) / 2)
        d = at['quantile'] - ac['quantile']
        se = math.sqrt(ac['std_error'] ** 2 + at['std_error'] ** 2)
        rel = at['quantile'] / ac['quantile'] - 1
        se_rel = math.sqrt(at['std_error'] ** 2 / ac['quantile'] ** 2 + at['quantile'] ** 2 * ac['std_error'] ** 2 / ac['quantile'] ** 4)
        out.append({
            'name': name, 'p': p, 'confidence_level': level,
            'control_values': vc.tolist(), 'treatment_values': vt.tolist(),
            'expected': {
                'control': ac, 'treatment': at, 'difference': d, 'std_error': se, 'z': d / se,
                'p_value': float(2 * stats.norm.sf(abs(d / se))),
                'ci_lower': d - z * se, 'ci_upper': d + z * se,
                'relative_difference': rel, 'relative_std_error': se_rel,
                'relative_ci_lower': rel - z * se_rel, 'relative_ci_upper': rel + z * se_rel,
            },
        })
    return out


def main():
    rng = np.random.default_rng(20261127)
    doc = {
        'about': (f'Ratio (delta method), capping and quantile metric references, numpy {np.__version__}, SciPy {scipy.__version__}, '
                  'generated by scripts/reference/metrics.py from seed 20261127. Tolerance: relative 1e-9.'),
        'cases': {
            'ratio_delta_method': ratio_cases(rng),
            'ratio_denominator_one_is_welch': mean_cases(rng),
            'capping': capping_cases(rng),
            'quantile_difference': quantile_cases(rng),
        },
    }
    OUT.write_text(json.dumps(doc, indent=1) + '\n')
    from definitions_http import definition_experiments  # imports this module's reference functions
    HTTP_OUT.write_text(json.dumps(definition_experiments(), indent=1) + '\n')


if __name__ == '__main__':
    main()
