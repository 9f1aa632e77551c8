"""Argument checks shared by the cost formulas: counts, shares and cache multipliers.

Each raises ValueError with a message that names the argument and what it must be.
"""
from __future__ import annotations

def nonneg(name: str, value: float) -> float:
    if value is None or not isinstance(value, (int, float)) or value != value:
        raise ValueError(f"{name} must be a number >= 0, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0 (a count or an amount), got {value!r}")
    return value


def share(name: str, value: float) -> float:
    nonneg(name, value)
    if value > 1:
        raise ValueError(f"{name} is a share and must be between 0 and 1, got {value!r}")
    return value


def check_multipliers(w: float, r: float) -> None:
    nonneg("w (cache write multiplier)", w)
    nonneg("r (cache read multiplier)", r)
    if r >= 1:
        raise ValueError(
            f"r (cache read multiplier) must be below 1, otherwise caching never pays; got {r!r}"
        )


def check_k(k: float) -> None:
    nonneg("k (calls that reuse the cached text)", k)
    if k < 1:
        raise ValueError(f"k (calls that share one cache write) must be >= 1, got {k!r}")
