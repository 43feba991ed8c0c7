#!/usr/bin/python3
"""Reads the changes bench/churn_kazoo.py made and the events of `zklock -o
json watch` (JSON Lines), waiting up to WAIT seconds for the watch to report
every change; prints `<lag p50 ms> <lag p99 ms> <changes reported>
<changes made>`. A change is reported by a `waiting` event for a node it
created and a `left` event for a node it deleted; the lag is the event's
`time_ms` minus the time the change was sent.

Usage: /usr/bin/python3 bench/watch_lag.py CHURN_LOG WATCH_LOG WAIT
"""

import json
import sys
import time

EVENT_OF = {"created": "waiting", "deleted": "left"}


def events(path):
    seen = {}
    with open(path) as lines:
        for line in lines:
            try:
                event = json.loads(line)
            except ValueError:
                continue  # a line still being written
            seen.setdefault((event["event"], event.get("node")), event["time_ms"])
    return seen


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def main():
    churn_log, watch_log, wait = sys.argv[1], sys.argv[2], float(sys.argv[3])
    with open(churn_log) as lines:
        changes = [(EVENT_OF[kind], path, float(sent)) for kind, path, sent in (line.split() for line in lines)]
    deadline = time.monotonic() + wait
    while True:
        seen = events(watch_log)
        lags = [seen[(event, path)] - sent for event, path, sent in changes if (event, path) in seen]
        if len(lags) == len(changes) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    print(f"{percentile(lags, 0.5):.1f} {percentile(lags, 0.99):.1f} {len(lags)} {len(changes)}")


if __name__ == "__main__":
    main()
