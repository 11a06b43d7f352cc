"""The exact McNemar test at report scale: refinelab's ``mcnemar`` against scipy's ``binomtest`` (the peer,
the same exact two-sided test for a fair coin), and against the quadratic sum it replaced, in one run.

For each count of discordant pairs (split 49.5% / 50.5%, the hard case: a p-value near neither 0 nor 1)
the three are timed back to back (the best of ``--repeats``) and their p-values printed; the quadratic sum
only up to ``--old-up-to`` pairs (it took 11.8 s at 10,000 and did not finish 40,300 in 300 s).

    python bench/mcnemar_scale.py [--repeats 3] [--old-up-to 10000]
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable

from scipy.stats import binomtest  # type: ignore[import-untyped]

from refinelab.metrics import Paired, mcnemar

COUNTS = (1_000, 10_000, 40_300, 200_000, 1_000_000)


def quadratic(only_a: int, only_b: int) -> float:
    """The sum this bench measures against: every binomial coefficient computed afresh."""
    low, n = min(only_a, only_b), only_a + only_b
    tail: float = sum(math.comb(n, i) for i in range(low + 1)) / 2**n
    return min(1.0, 2 * tail)


def best(call: Callable[[], float], repeats: int) -> tuple[float, float]:
    """The fastest of ``repeats`` calls, and what it returned."""
    times, value = [], 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        value = call()
        times.append(time.perf_counter() - start)
    return min(times), value


def row(n: int, repeats: int, old_up_to: int) -> str:
    """One count's line: the three timed, and both p-values."""
    only_a = n * 495 // 1000
    only_b = n - only_a
    pairs = Paired((True,) * only_a + (False,) * only_b, (False,) * only_a + (True,) * only_b)
    mine, p = best(lambda: mcnemar(pairs), repeats)
    theirs, q = best(lambda: float(binomtest(min(only_a, only_b), n, 0.5).pvalue), repeats)
    old = f"{best(lambda: quadratic(only_a, only_b), 1)[0]:9.4f}s" if n <= old_up_to else "       -  "
    return f"{n:>10,}  {mine:9.4f}s  {theirs:9.4f}s  {mine / theirs:5.2f}x  {old:>10}  {p:.9g}, {q:.9g}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--old-up-to", type=int, default=10_000)
    args = parser.parse_args()
    print(f"{'pairs':>10}  {'refinelab':>10}  {'scipy':>10}  {'ratio':>6}  {'quadratic':>10}  p (refinelab, scipy)")
    for n in COUNTS:
        print(row(n, args.repeats, args.old_up_to))
    print("(ratio: refinelab's time over scipy's, same process, back to back; mcnemar counts the pairs too)")


if __name__ == "__main__":
    main()
