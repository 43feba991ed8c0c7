#!/usr/bin/python3
"""Churn for the watch job: changes one lock at RATE changes a second for
SECONDS seconds, alternately adding a waiter (an ephemeral-sequential node
under a protected name, as Curator and zklock name them) and removing the
waiter it added just before, so the queue keeps its length. Prints one line
per change, `<created|deleted> <node path> <ms since the epoch>`, the time
being when the request was sent: an event's lag is measured from there.

Usage: /usr/bin/python3 bench/churn_kazoo.py HOSTS LOCK_DIR RATE SECONDS
"""

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
    changes = int(rate * seconds) // 2 * 2
    log, deletes = [], []
    start = time.monotonic()
    created = None  # (time sent, async result) of the last create
    for i in range(changes):
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        if i % 2 == 0:
            prefix = f"{lock}/_c_{uuid.uuid4()}-lock-"
            created = (time.time() * 1000, client.create_async(prefix, ephemeral=True, sequence=True))
        else:
            sent, result = created
            path = result.get()
            log.append(("created", path, sent))
            now = time.time() * 1000
            deletes.append(client.delete_async(path))
            log.append(("deleted", path, now))
    for result in deletes:
        result.get()
    client.stop()
    client.close()
    for kind, path, sent in log:
        print(f"{kind} {path} {sent:.1f}")


if __name__ == "__main__":
    main()
