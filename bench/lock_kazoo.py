#!/usr/bin/python3
"""The kazoo side of bench/run's lock jobs: what `zklock lock PATH -- CMD`
does, done the way a kazoo script would: connect, take kazoo's Lock, run the
command, release, close.

Usage: /usr/bin/python3 bench/lock_kazoo.py HOSTS PATH CMD...   (Debian's python3-kazoo)
"""

import logging
import subprocess
import sys

from kazoo.client import KazooClient

logging.getLogger("kazoo").addHandler(logging.NullHandler())
logging.getLogger("kazoo").propagate = False


def main():
    hosts, path, command = sys.argv[1], sys.argv[2], sys.argv[3:]
    client = KazooClient(hosts=hosts, timeout=10)
    client.start()
    lock = client.Lock(path)
    lock.acquire()
    try:
        code = subprocess.run(command).returncode
    finally:
        lock.release()
        client.stop()
        client.close()
    sys.exit(code)


if __name__ == "__main__":
    main()
