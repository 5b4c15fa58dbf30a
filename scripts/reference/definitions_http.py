"""Reference values for test/results/definitions-reference.test.ts: two experiments sharing five metric library
definitions (proportion, mean, ratio by the delta method, capped mean, p90), per-user events from a fixed seed, every
expected number computed here with numpy/SciPy from the per-user arrays. Imported by metrics.py, which writes
test/vectors/metric-definitions-http.json. Formulas: docs/statistics.md ("Metric library definitions in results",
"Definitions in the other analyses")."""
import math

import numpy as np
from scipy import stats

from metrics import delta_ratio, quantile_arm

LEVEL = 0.95
CAP_P = 0.9
QUANTILE = 0.9


def users_of(rng, n, lift, history):
    """Per user: page views, purchases, order values, load times (ms) and pre-exposure visits."""
    out = []
    for _ in range(n):
        views = int(1 + rng.poisson(2.0))
        buys = int(rng.binomial(2, 0.18 * (1 + lift)))
        orders = [float(np.round(rng.lognormal(3.2, 0.7) * (1 + lift), 2)) for _ in range(buys)]
        if rng.random() < 0.03:
            orders.append(float(np.round(rng.uniform(400, 900), 2)))  # an outlier order
        loads = [float(np.round(rng.lognormal(6.3, 0.45) * (1 + lift / 2), 1)) for _ in range(int(rng.integers(0, 3)))]
        visits = int(rng.poisson(1.0 + 0.6 * buys)) if history else 0
        out.append({'page_views': views, 'orders': orders, 'load_times': loads, 'visits_before': visits})
    return out


def welch(c, t, level):
    res = stats.ttest_ind(t, c, equal_var=False)
    ci = res.confidence_interval(level)
    return float(res.pvalue), float(np.mean(t) - np.mean(c)), float(ci.low), float(ci.high)


def bh(p):
    m = len(p)
    order = np.argsort(p)
    adj = np.empty(m)
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, p[i] * m / rank)
        adj[i] = min(1.0, running)
    return adj.tolist()


def msprt(d, v, tau2, alpha):
    log_lambda = -0.5 * math.log1p(tau2 / v) + (tau2 / (v + tau2)) * (d * d / v) / 2
    half = math.sqrt(v * (1 + v / tau2) * (math.log1p(tau2 / v) + 2 * math.log(1 / alpha)))
    return {'difference': d, 'tau_squared': tau2, 'always_valid_p_value': min(1.0, math.exp(-log_lambda)),
            'lower': d - half, 'upper': d + half}


def normal_bayes(mc, vc, mt, vt, level, rope):
    z = stats.norm.ppf((1 + level) / 2)
    lift = mt / mc - 1
    se = math.sqrt(vt / mc ** 2 + mt ** 2 * vc / mc ** 4)
    u = lift / se
    return {'prob_beat_control': float(stats.norm.cdf(u)),
            'expected_loss': float(se * stats.norm.pdf(u) - lift * stats.norm.cdf(-u)),
            'rope_probability': float(stats.norm.cdf((rope - lift) / se) - stats.norm.cdf((-rope - lift) / se)),
            'control_interval': [mc - z * math.sqrt(vc), mc + z * math.sqrt(vc)],
            'treatment_interval': [mt - z * math.sqrt(vt), mt + z * math.sqrt(vt)]}


def two_means_plan(sigma2, effect, alpha, power, current):
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    n = 2 * sigma2 * z * z / effect ** 2
    return {'required': int(math.ceil(n)),
            'achieved_power': float(stats.norm.cdf(abs(effect) * math.sqrt(current / (2 * sigma2)) - stats.norm.ppf(1 - alpha / 2)))}


def cuped_mean(arms, i):
    """CUPED of arm i against arm 0 (pooled within-arm slope over the two arms; Welch on the adjusted values)."""
    (yc, cc), (yt, ct) = arms[0], arms[i]
    sxx = np.sum((cc - cc.mean()) ** 2) + np.sum((ct - ct.mean()) ** 2)
    sxy = np.sum((cc - cc.mean()) * (yc - yc.mean())) + np.sum((ct - ct.mean()) * (yt - yt.mean()))
    theta = sxy / sxx
    grand = np.concatenate([cc, ct]).mean()
    ac, at = yc - theta * (cc - grand), yt - theta * (ct - grand)
    p, d, lo, hi = welch(ac, at, LEVEL)
    before = np.var(yc, ddof=1) / len(yc) + np.var(yt, ddof=1) / len(yt)
    after = np.var(ac, ddof=1) / len(ac) + np.var(at, ddof=1) / len(at)
    return {'theta': float(theta), 'adjusted_effect': d, 'p_value': p, 'ci_lower': lo, 'ci_upper': hi,
            'variance_reduction': float(1 - after / before)}


def cuped_ratio(arms, i):
    """Delta-method CUPED of ratio arm i against arm 0 through the linearisation l = (x − R·y)/ȳ."""
    lin = []
    for x, y, c in (arms[0], arms[i]):
        r = x.mean() / y.mean()
        lin.append(((x - r * y) / y.mean(), c, r))
    scc = sum(np.sum((c - c.mean()) ** 2) for _, c, _ in lin)
    slc = sum(np.sum((l - l.mean()) * (c - c.mean())) for l, c, _ in lin)
    theta = slc / scc
    grand = np.concatenate([arms[0][2], arms[i][2]]).mean()
    adj, var, var0 = [], [], []
    for l, c, r in lin:
        n = len(l)
        adj.append(r - theta * (c.mean() - grand))
        var.append(np.var(l - theta * c, ddof=1) / n)
        var0.append(np.var(l, ddof=1) / n)
    d = adj[1] - adj[0]
    se = math.sqrt(var[0] + var[1])
    n0, n1 = len(lin[0][0]), len(lin[1][0])
    df = (var[0] + var[1]) ** 2 / (var[0] ** 2 / (n0 - 1) + var[1] ** 2 / (n1 - 1))
    q = stats.t.ppf(1 - (1 - LEVEL) / 2, df)
    return {'theta': float(theta), 'adjusted_effect': float(d), 'p_value': float(2 * stats.t.sf(abs(d / se), df)),
            'ci_lower': float(d - q * se), 'ci_upper': float(d + q * se),
            'variance_reduction': float(1 - (var[0] + var[1]) / (var0[0] + var0[1]))}


def experiment(rng, lifts, history, expected_effect):
    variants = [users_of(rng, n, lift, history) for n, lift in lifts]
    col = lambda users, f: np.array([f(u) for u in users], dtype=float)
    revenue = [col(v, lambda u: math.fsum(u['orders'])) for v in variants]
    views = [col(v, lambda u: u['page_views']) for v in variants]
    bought = [col(v, lambda u: 1.0 if u['orders'] else 0.0) for v in variants]
    visits = [col(v, lambda u: u['visits_before']) for v in variants]
    loads = [np.array([math.fsum(u['load_times']) for u in v if u['load_times']]) for v in variants]
    cap = float(np.quantile(np.concatenate(revenue), CAP_P))
    capped = [np.minimum(r, cap) for r in revenue]
    z = stats.norm.ppf(1 - (1 - LEVEL) / 2)
    out = {}

    def compare(kind, per_variant):
        rows = [per_variant(0, i) for i in range(1, len(variants))]
        adjusted = bh([r['p_value'] for r in rows])
        for r, a in zip(rows, adjusted):
            r['adjusted_p_value'] = a
        return rows

    def mean_like(values):
        def one(c, i):
            p, d, lo, hi = welch(values[c], values[i], LEVEL)
            mc, mt = values[c].mean(), values[i].mean()
            return {'p_value': p, 'difference': d, 'difference_ci': [lo, hi], 'relative': float(mt / mc - 1),
                    'relative_ci': [lo / abs(mc), hi / abs(mc)]}
        return one

    def proportion(c, i):
        xc, xt, nc, nt = bought[c].sum(), bought[i].sum(), len(bought[c]), len(bought[i])
        pc, pt = xc / nc, xt / nt
        p = stats.fisher_exact([[xt, nt - xt], [xc, nc - xc]]).pvalue
        rel = pt / pc - 1
        se = math.sqrt(pt * (1 - pt) / nt / pc ** 2 + pt ** 2 * pc * (1 - pc) / nc / pc ** 4)
        _, d, lo, hi = welch(bought[c], bought[i], LEVEL)
        return {'p_value': float(p), 'difference': d, 'difference_ci': [lo, hi], 'relative': rel, 'relative_ci': [rel - z * se, rel + z * se]}

    def ratio(c, i):
        rc, vc = delta_ratio(capped_none[c], views[c])
        rt, vt = delta_ratio(capped_none[i], views[i])
        d = rt - rc
        se = math.sqrt(vc + vt)
        df = (vc + vt) ** 2 / (vc ** 2 / (len(views[c]) - 1) + vt ** 2 / (len(views[i]) - 1))
        q = stats.t.ppf(1 - (1 - LEVEL) / 2, df)
        rel = rt / rc - 1
        se_rel = math.sqrt(vt / rc ** 2 + rt ** 2 * vc / rc ** 4)
        return {'p_value': float(2 * stats.t.sf(abs(d / se), df)), 'difference': d, 'difference_ci': [d - q * se, d + q * se],
                'relative': rel, 'relative_ci': [rel - q * se_rel, rel + q * se_rel]}

    def p90(c, i):
        qc, sc = (quantile_arm(loads[c], QUANTILE, LEVEL)[k] for k in ('quantile', 'std_error'))
        qt, st = (quantile_arm(loads[i], QUANTILE, LEVEL)[k] for k in ('quantile', 'std_error'))
        d = qt - qc
        se = math.sqrt(sc ** 2 + st ** 2)
        rel = qt / qc - 1
        se_rel = math.sqrt(st ** 2 / qc ** 2 + qt ** 2 * sc ** 2 / qc ** 4)
        return {'p_value': float(2 * stats.norm.sf(abs(d / se))), 'difference': d, 'difference_ci': [d - z * se, d + z * se],
                'relative': rel, 'relative_ci': [rel - z * se_rel, rel + z * se_rel]}

    capped_none = revenue
    out['proportion'] = {'values': [float(b.mean()) for b in bought], 'with_events': [int(b.sum()) for b in bought],
                         'treatments': compare('proportion', proportion)}
    out['mean'] = {'values': [float(r.mean()) for r in revenue], 'treatments': compare('mean', mean_like(revenue))}
    out['ratio'] = {'values': [float(r.sum() / v.sum()) for r, v in zip(revenue, views)], 'treatments': compare('ratio', ratio)}
    out['capped'] = {'values': [float(r.mean()) for r in capped], 'cap': cap,
                     'users_capped': [int((r > cap).sum()) for r in revenue], 'treatments': compare('mean', mean_like(capped))}
    out['p90'] = {'values': [quantile_arm(l, QUANTILE, LEVEL)['quantile'] for l in loads], 'with_events': [len(l) for l in loads],
                  'treatments': compare('p90', p90)}
    # Sequential (first treatment, alpha 0.05), Bayesian (defaults: rope 0.01, level 0.95), sample size (mde, power 0.8).
    mde = expected_effect
    mc, mt = capped[0].mean(), capped[1].mean()
    vc, vt = np.var(capped[0], ddof=1) / len(capped[0]), np.var(capped[1], ddof=1) / len(capped[1])
    pooled = (capped[0].sum() + capped[1].sum()) / (len(capped[0]) + len(capped[1]))
    rc, rvc = delta_ratio(revenue[0], views[0])
    rt, rvt = delta_ratio(revenue[1], views[1])
    pooled_ratio = (revenue[0].sum() + revenue[1].sum()) / (views[0].sum() + views[1].sum())
    pc, pt = bought[0].mean(), bought[1].mean()
    pooled_rate = (bought[0].sum() + bought[1].sum()) / (len(bought[0]) + len(bought[1]))
    out['sequential'] = {
        'capped': msprt(mt - mc, vc + vt, (mde * pooled) ** 2, 0.05),
        'ratio': msprt(rt - rc, rvc + rvt, (mde * pooled_ratio) ** 2, 0.05),
        'proportion': msprt(pt - pc, pc * (1 - pc) / len(bought[0]) + pt * (1 - pt) / len(bought[1]), (mde * pooled_rate) ** 2, 0.05),
    }
    out['bayesian'] = {'capped': normal_bayes(mc, vc, mt, vt, 0.95, 0.01), 'ratio': normal_bayes(rc, rvc, rt, rvt, 0.95, 0.01)}
    current = min(len(v) for v in variants)
    alpha = 0.05 / (len(variants) - 1)
    out['sample_size'] = {
        'capped': {**two_means_plan(vc * len(capped[0]), mde * mc, alpha, 0.8, current), 'baseline_value': float(mc),
                   'baseline_std_dev': float(np.std(capped[0], ddof=1))},
        'ratio': {**two_means_plan(rvc * len(views[0]), mde * rc, alpha, 0.8, current), 'baseline_value': rc,
                  'baseline_std_dev': math.sqrt(rvc * len(views[0]))},
    }
    if history:
        out['cuped'] = {
            'capped': cuped_mean([(capped[k], visits[k]) for k in range(len(variants))], 1),
            'ratio': cuped_ratio([(revenue[k], views[k], visits[k]) for k in range(len(variants))], 1),
        }
    return {'expected_effect': expected_effect, 'variants': variants, 'expected': out}


def definition_experiments():
    rng = np.random.default_rng(32_2026)
    return {
        'about': ('Two experiments sharing five metric library definitions; per-user events and the expected results, '
                  'generated by scripts/reference/metrics.py (definitions_http.py) with numpy/SciPy. Relative 1e-9.'),
        'definitions': {'cap_percentile': CAP_P, 'quantile': QUANTILE, 'confidence_level': LEVEL},
        'experiments': [
            experiment(rng, [(130, 0.0), (135, 0.2)], True, 0.1),
            experiment(rng, [(90, 0.0), (95, 0.05), (90, 0.2)], False, 0.05),
        ],
    }
