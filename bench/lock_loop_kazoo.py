#!/usr/bin/python3
"""The long-lived kazoo side of the handoff job: one process, one session,
looping over kazoo's Lock acquire/release, so the handoff rate it helps
measure holds no interpreter start-up. It connects, prints READY, waits
until GO_FILE exists (so every worker starts at once, after all have
started), takes and releases the lock LOOPS times and prints the wall-clock
time (seconds since the epoch) at which its last release returned.

Usage: /usr/bin/python3 bench/lock_loop_kazoo.py HOSTS PATH LOOPS GO_FILE
"""

import logging
import os
import sys
import time

from kazoo.client import KazooClient

logging.getLogger("kazoo").addHandler(logging.NullHandler())
logging.getLogger("kazoo").propagate = False


def main():
    hosts, path, loops, go_file = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    client = KazooClient(hosts=hosts, timeout=10)
    client.start()
    lock = client.Lock(path)
    print("READY", flush=True)
    while not os.path.exists(go_file):
        time.sleep(0.001)
    for _ in range(loops):
        lock.acquire()
        lock.release()
    print(f"{time.time():.6f}", flush=True)
    client.stop()
    client.close()


if __name__ == "__main__":
    main()
