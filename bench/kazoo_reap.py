#!/usr/bin/python3
"""The kazoo side of the reap job: the job of `zklock reap --all ROOT` on a
tree of lock directories (ROOT/DIR/CONTENDER), done the way a kazoo script
at its best would do it: list ROOT, list every directory (all listings in
flight at once), and delete every child whose name ends in a sequence
number in transactions of BATCH deletes, all committed at once. It reads no
versions or data and prints how many nodes it deleted.

Usage: /usr/bin/python3 bench/kazoo_reap.py HOSTS ROOT   (Debian's python3-kazoo)
"""

import logging
import re
import sys

from kazoo.client import KazooClient

# ZooKeeper's sequence suffix: %010d of a signed 32-bit counter.
SEQUENCE = re.compile(r"(\d{10}|-\d{9})$")
# Deletes per transaction, as in bench/delete_floor.rs.
BATCH = 1000


def main():
    hosts, root = sys.argv[1:3]
    logging.getLogger("kazoo").addHandler(logging.NullHandler())
    logging.getLogger("kazoo").propagate = False
    zk = KazooClient(hosts=hosts)
    zk.start(timeout=10)
    try:
        directories = [root.rstrip("/") + "/" + name for name in zk.get_children(root)]
        listings = [(d, zk.get_children_async(d)) for d in directories]
        nodes = [d + "/" + child for d, listing in listings for child in listing.get() if SEQUENCE.search(child)]
        commits = []
        for start in range(0, len(nodes), BATCH):
            transaction = zk.transaction()
            for node in nodes[start : start + BATCH]:
                transaction.delete(node)
            commits.append((transaction.commit_async(), len(nodes[start : start + BATCH])))
        deleted = 0
        for commit, size in commits:
            results = commit.get()
            if not any(isinstance(result, Exception) for result in results):
                deleted += size
        print(deleted)
    finally:
        zk.stop()
        zk.close()


if __name__ == "__main__":
    main()
