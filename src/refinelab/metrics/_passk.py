"""pass@k: the unbiased estimator of Chen et al. (2021)."""

from __future__ import annotations

from collections.abc import Iterable


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of ``k`` samples drawn from ``n`` (``c`` correct) is correct.

    ``1 - C(n - c, k) / C(n, k)``, computed as a product to stay exact for large ``n``.
    """
    if not 0 <= c <= n or k < 1 or k > n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    result = 1.0
    for i in range(n - c + 1, n + 1):
        result *= 1.0 - k / i
    return 1.0 - result


def mean_pass_at_k(counts: Iterable[tuple[int, int]], k: int) -> float | None:
    """Mean pass@k over problems given ``(n, c)`` per problem; None if some problem has fewer than k."""
    values = []
    for n, c in counts:
        if n < k:
            return None
        values.append(pass_at_k(n, c, k))
    return sum(values) / len(values) if values else None
