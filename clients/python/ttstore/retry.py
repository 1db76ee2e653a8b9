"""When to retry and how long to wait (the TypeScript client's policy): 429 and 503 are refused before
any work, so any request may be sent again; waits grow exponentially with full jitter, never shorter
than Retry-After, and a wait over the cap gives up rather than retry early into another refusal."""

from __future__ import annotations

import email.utils
import random
import time
from dataclasses import dataclass
from typing import Callable, Optional

RETRY_STATUSES = frozenset({429, 503})


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 5
    base_s: float = 0.2
    max_delay_s: float = 60.0  # a rate-limit window


def retry_after_seconds(header: Optional[str], now: Optional[float] = None) -> Optional[float]:
    if header is None or header.strip() == "":
        return None
    try:
        return max(0.0, float(header))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(header).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def backoff_s(policy: RetryPolicy, attempt: int, retry_after_s: Optional[float], rand: Callable[[], float] = random.random) -> Optional[float]:
    """The wait before retry number ``attempt`` (0-based), or None to give up."""
    if attempt >= policy.retries:
        return None
    jittered = rand() * min(policy.max_delay_s, policy.base_s * 2**attempt)
    floor = retry_after_s or 0.0
    if floor > policy.max_delay_s:
        return None
    return min(policy.max_delay_s, max(floor, jittered))
