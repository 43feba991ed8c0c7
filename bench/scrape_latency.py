#!/usr/bin/python3
"""Scrapes URL every INTERVAL seconds for SECONDS seconds, each time as
Prometheus does (asking for OpenMetrics first), and prints `<p50 ms> <p99 ms>
<max ms> <scrapes> <bytes of the last answer>`. A scrape that fails ends the
run with an error.

Usage: /usr/bin/python3 bench/scrape_latency.py URL SECONDS INTERVAL
"""

import sys
import time
import urllib.request

ACCEPT = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"


def main():
    url, seconds, interval = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    latencies, size = [], 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        request = urllib.request.Request(url, headers={"Accept": ACCEPT})
        start = time.monotonic()
        with urllib.request.urlopen(request, timeout=10) as answer:
            size = len(answer.read())
        latencies.append((time.monotonic() - start) * 1000)
        time.sleep(interval)
    latencies.sort()

    def at(share):
        return latencies[min(len(latencies) - 1, int(share * len(latencies)))]

    print(f"{at(0.5):.2f} {at(0.99):.2f} {latencies[-1]:.2f} {len(latencies)} {size}")


if __name__ == "__main__":
    main()
