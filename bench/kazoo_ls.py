#!/usr/bin/python3
"""The kazoo side of the ls job: the job of `zklock ls PATH -o json`, done
the way a kazoo script at its best would do it. It walks the tree one level
at a time and pipelines each level: the reads (get_async) and listings
(get_children_async) of every node of the level are all in flight at once,
then collected. Children whose names end in a sequence number are
contenders, ordered by that number; it prints every lock with its holder and
waiters as JSON.

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


def walk(zk, root):
    """Every lock under `root`: the directories with contender children."""
    contenders = {}  # lock directory -> its contenders
    level = [root]
    while level:
        reads = [(path, zk.get_async(path), zk.get_children_async(path)) for path in level]
        level = []
        for path, read, listing in reads:
            data, stat = read.get()
            parent, _, name = path.rpartition("/")
            if path != root and SEQUENCE.search(name):
                contenders.setdefault(parent or "/", []).append(contender(path, name, data, stat))
            level.extend(path.rstrip("/") + "/" + child for child in listing.get())
    locks = []
    for path, found in contenders.items():
        found.sort(key=lambda c: c["sequence"])
        locks.append({"path": path, "holders": found[:1], "waiters": found[1:]})
    locks.sort(key=lambda lock: lock["path"])
    return locks


def main():
    hosts, path = sys.argv[1:3]
    logging.getLogger("kazoo").addHandler(logging.NullHandler())
    logging.getLogger("kazoo").propagate = False
    zk = KazooClient(hosts=hosts)
    zk.start(timeout=10)
    try:
        json.dump(walk(zk, path), sys.stdout, indent=2)
        sys.stdout.write("\n")
    finally:
        zk.stop()
        zk.close()


if __name__ == "__main__":
    main()
