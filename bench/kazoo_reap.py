#!/usr/bin/python3
"""The kazoo side of the reap benchmark: the job of `zklock reap --all ROOT`
on a tree of lock directories (ROOT/DIR/CONTENDER), done the way a kazoo
script would do it: list ROOT, list each directory, and delete every child
whose name ends in a sequence number, one by one. It reads no versions (one
round trip a node, the least a one-by-one delete can do) and prints how
many nodes it deleted.

Usage: /usr/bin/python3 bench/kazoo_reap.py HOSTS ROOT   (Debian's python3-kazoo)
"""

import logging
import re
import sys

from kazoo.client import KazooClient

# ZooKeeper's sequence suffix: %010d of a signed 32-bit counter.
SEQUENCE = re.compile(r"(\d{10}|-\d{9})$")


def main():
    hosts, root = sys.argv[1:3]
    logging.getLogger("kazoo").addHandler(logging.NullHandler())
    logging.getLogger("kazoo").propagate = False
    zk = KazooClient(hosts=hosts)
    zk.start(timeout=10)
    try:
        deleted = 0
        for name in zk.get_children(root):
            directory = root.rstrip("/") + "/" + name
            for child in zk.get_children(directory):
                if SEQUENCE.search(child):
                    zk.delete(directory + "/" + child)
                    deleted += 1
        print(deleted)
    finally:
        zk.stop()
        zk.close()


if __name__ == "__main__":
    main()
