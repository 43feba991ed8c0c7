#!/usr/bin/python3
"""The kazoo side of bench/inspect: the job of `zklock ls PATH -o json`, done
the way a kazoo script would do it. It walks the tree sequentially, reading
every node (get) and listing it (get_children), treats the children whose
names end in a sequence number as contenders, orders them by that number and
prints every lock with its holder and waiters as JSON.

Usage: /usr/bin/python3 bench/kazoo_ls.py HOSTS PATH   (Debian's python3-kazoo)
"""

import json
import logging
import re
import sys

from kazoo.client import KazooClient

# ZooKeeper's sequence suffix: %010d of a signed 32-bit counter.
SEQUENCE = re.compile(r"(\d{10}|-\d{9})$")


def contender(path, name, data, stat):
    return {
        "path": path,
        "name": name,
        "sequence": int(SEQUENCE.search(name).group(1)),
        "session": hex(stat.ephemeralOwner),
        "ctime_ms": stat.ctime,
        "fence": stat.czxid,
        "data": data.decode("utf-8", "replace") or None,
    }


def walk(zk, path, locks):
    """Reads `path` and everything below it; returns (data, stat) of `path`."""
    data, stat = zk.get(path)
    contenders = []
    for name in sorted(zk.get_children(path)):
        child = path.rstrip("/") + "/" + name
        child_data, child_stat = walk(zk, child, locks)
        if SEQUENCE.search(name):
            contenders.append(contender(child, name, child_data, child_stat))
    if contenders:
        contenders.sort(key=lambda c: c["sequence"])
        locks.append({"path": path, "holders": contenders[:1], "waiters": contenders[1:]})
    return data, stat


def main():
    hosts, path = sys.argv[1:3]
    logging.getLogger("kazoo").addHandler(logging.NullHandler())
    logging.getLogger("kazoo").propagate = False
    zk = KazooClient(hosts=hosts)
    zk.start(timeout=10)
    try:
        locks = []
        walk(zk, path, locks)
        locks.sort(key=lambda lock: lock["path"])
        json.dump(locks, sys.stdout, indent=2)
        sys.stdout.write("\n")
    finally:
        zk.stop()
        zk.close()


if __name__ == "__main__":
    main()
