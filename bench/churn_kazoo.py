#!/usr/bin/python3
"""Churn for the watch job: changes one lock at RATE changes a second for
SECONDS seconds. It adds waiters (ephemeral-sequential nodes under a
protected name, as Curator and zklock name them) until RATE / 2 of its own
are queued, then alternately adds one and removes its oldest, so each lives
about a second and the queue keeps its length. Prints one line per change,
`<created|deleted> <node path> <ms since the epoch>`, the time being when
the request was sent: an event's lag is measured from there. Its waiters
left at the end go with its session, unrecorded.

Usage: /usr/bin/python3 bench/churn_kazoo.py HOSTS LOCK_DIR RATE SECONDS
"""

import collections
import logging
import sys
import time
import uuid

from kazoo.client import KazooClient

logging.getLogger("kazoo").addHandler(logging.NullHandler())
logging.getLogger("kazoo").propagate = False


def main():
    hosts, lock, rate, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
    client = KazooClient(hosts=hosts, timeout=10)
    client.start()
    changes = int(rate * seconds)
    keep = max(1, int(rate / 2))
    creates, deletes, live = [], [], collections.deque()
    start = time.monotonic()
    for i in range(changes):
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        if len(live) >= keep and i % 2 == 1:
            path = live.popleft().get()
            deletes.append((path, time.time() * 1000))
            client.delete_async(path)
        else:
            sent = time.time() * 1000
            created = client.create_async(f"{lock}/_c_{uuid.uuid4()}-lock-", ephemeral=True, sequence=True)
            creates.append((created, sent))
            live.append(created)
    for created, sent in creates:
        print(f"created {created.get()} {sent:.1f}")
    for path, sent in deletes:
        print(f"deleted {path} {sent:.1f}")
    # Every delete was sent before this sync, so each has been done after it.
    client.sync(lock)
    client.stop()
    client.close()


if __name__ == "__main__":
    main()
