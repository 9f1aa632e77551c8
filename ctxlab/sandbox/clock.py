"""The sandbox's clock: simulated seconds, real time plus what a cell advanced, or manual only."""
from __future__ import annotations

import time


class Clock:
    """Simulated seconds: real (monotonic) time since creation plus what :meth:`advance` added.

    With ``realtime=False`` the clock moves only when advanced, which makes a replay exact.
    """

    def __init__(self, *, realtime: bool = True, start: float = 0.0):
        self.realtime = realtime
        self._t0 = time.monotonic()
        self._offset = float(start)

    def now(self) -> float:
        if self.realtime:
            return time.monotonic() - self._t0 + self._offset
        return self._offset

    def advance(self, seconds: float) -> float:
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds != seconds:
            raise ValueError(f"advance() needs a number of seconds, got {seconds!r}")
        if seconds < 0:
            raise ValueError(f"the clock only moves forward: advance({seconds!r}) is negative")
        self._offset += float(seconds)
        return self.now()
