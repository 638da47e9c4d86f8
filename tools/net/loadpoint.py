# SPDX-License-Identifier: MIT
"""The rule for when an open-loop load point is saturated, one place for
the load generator's driver (tools/net/netbench.py) and the figures
(tools/bench/figures.py), which applies it again to archived points.
Python 3 standard library only, and nothing else imported: the figures
check runs in make test, which needs none of netbench's programs.

>>> is_saturated({"scheduled_rps": 100, "achieved_rps": 96, "errors": 0})
False
>>> is_saturated({"offered_rps": 100, "achieved_rps": 94, "errors": 0})
True
>>> saturation([{"offered_rps": 10, "achieved_rps": 10, "errors": 0},
...             {"offered_rps": 20, "achieved_rps": 20, "errors": 1}])
20
"""


def is_saturated(p):
    """Under 95% of the arrivals the Poisson process drew (scheduled_rps),
    not of the nominal rate: at a few dozen requests a second an 8 s draw
    falls 5-10% short of the rate by chance alone. Any error counts too."""
    drawn = p.get("scheduled_rps") or p.get("offered_rps", 0)
    return p.get("errors", -1) != 0 or p.get("achieved_rps", 0) < 0.95 * drawn


def saturation(points):
    """The first offered load whose achieved rate is under 95% of its drawn
    arrivals, or that has errors; None when every point kept up."""
    for p in points:
        if is_saturated(p):
            return p.get("offered_rps")
    return None


if __name__ == "__main__":
    import doctest
    import sys
    sys.exit(doctest.testmod().failed)
