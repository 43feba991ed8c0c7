#!/usr/bin/python3
"""kazoo_peer — a kazoo lock contender driven by a small line protocol, used by
zklock's integration tests and benchmarks to contend for the same lock path as
zklock (and CuratorPeer.java).

Run with Debian's interpreter, which has python3-kazoo (2.8.0):

    /usr/bin/python3 tests/peers/kazoo_peer.py <connect-string> <lock-path> <mode> [options]

Protocol (shared with CuratorPeer.java):
  mode: mutex -> kazoo Lock       node <uuid4 hex>__lock__NNNNNNNNNN
        read  -> kazoo ReadLock   node <uuid4 hex>__rlock__NNNNNNNNNN
        write -> kazoo WriteLock  node <uuid4 hex>__lock__NNNNNNNNNN (same name as mutex)
        semaphore -> kazoo Semaphore, one lease: node <uuid4 hex> (no sequence); the
                 maximum in <lock-path>'s data; acquirers queue on <lock-path>-__lock__
        election -> kazoo Election (its run() holds the Election's own Lock while the
                 leader function runs; the peer holds that lock): node <uuid4 hex>__lock__N
        party -> kazoo Party, joined: node <uuid4 hex>__party__ (no sequence), ephemeral
        lease -> kazoo NonBlockingLease for 10 minutes: node lease_holder, persistent, JSON
  --print-local           after READY, print "LOCAL <host>:<port>": the local address of
                          the client's connection to ZooKeeper
  --hold-ms N             hold N ms, then release (default: hold until a line is
                          read on stdin or stdin is closed)
  --timeout-ms N          acquire timeout; on timeout print TIMEOUT and exit 1
  --session-timeout-ms N  default 4000 (KazooClient timeout=N/1000)
  --loops N               acquire/hold/release N times (default 1)
  --identifier TEXT       kazoo's identifier, stored as the node's data
  --revocable             accepted for symmetry with CuratorPeer; kazoo has no
                          revocation, so it is ignored
  --abandon               when the hold ends, close the session without releasing
                          (print ABANDONED <epoch-ms>): the node goes with the session
  --max-leases N          (semaphore) the semaphore's maximum number of leases (default 1)
  --log FILE              append "start <czxid> <epoch-ms> kazoo-<pid>" to FILE once
                          acquired and "end <czxid> <epoch-ms> kazoo-<pid>" just before
                          releasing (czxid of our own node: the fencing token), one
                          O_APPEND write per line, for the tests' fencing log
  --then PATH             (mutex, read, write) once holding, also take PATH in the same
                          mode on the same session (one thread, as an application that
                          nests two locks does), printing a second ACQUIRED when granted;
                          a signal while waiting for it gives it up and releases both
  --then-after FILE       with --then: wait until FILE exists before taking PATH
  --extra-pattern P       (kazoo only, repeatable) kazoo's extra_lock_patterns: also
                          treat children whose name contains P before the sequence
                          number as contenders ahead of us, e.g. "-lock-" for Curator
                          mutex nodes, "__WRIT__" / "__READ__" for Curator r/w nodes
stdout, one line each, flushed at once:
  READY                               connected
  ACQUIRED <full-node-path> <epoch-ms>
  RELEASED <epoch-ms>
  TIMEOUT                             (then exit 1)
Exit: 0 done; 1 timeout; 2 error (message on stderr; bad arguments too).
A chroot in the connect string is created by kazoo if missing (with a warning);
CuratorPeer needs it to exist. Paths printed are relative to the chroot.
kazoo's own logging is silenced unless KAZOO_PEER_DEBUG=1.
Note: with --loops, kazoo reuses one Lock object, so every loop's node has the same
<uuid hex> prefix (Curator makes a new _c_<uuid> per acquire).
SIGTERM/SIGINT: if holding, release (prints RELEASED) and exit 0; if waiting, give up
(kazoo deletes our node, session closed) and exit 0 without printing.
"""

import argparse
import datetime
import logging
import os
import select
import signal
import sys
import threading
import time

try:
    from kazoo.client import KazooClient
    from kazoo.exceptions import CancelledError, LockTimeout
    from kazoo.recipe.lease import NonBlockingLease
    from kazoo.recipe.lock import Semaphore
except ImportError as e:  # pragma: no cover
    sys.stderr.write(
        "kazoo_peer: cannot import kazoo (%s); run with /usr/bin/python3 after "
        "`apt-get install -y python3-kazoo`\n" % e
    )
    sys.exit(2)


# Curator's peer is silenced with slf4j-nop; silence kazoo's connection chatter too
# (set KAZOO_PEER_DEBUG=1 to see it). Our own error messages still go to stderr.
if not os.environ.get("KAZOO_PEER_DEBUG"):
    logging.getLogger("kazoo").addHandler(logging.NullHandler())
    logging.getLogger("kazoo").propagate = False
else:
    logging.basicConfig(level=logging.DEBUG)


def now_ms():
    return int(time.time() * 1000)


def out(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class Peer(object):
    def __init__(self, args):
        self.args = args
        self.client = None
        self.terminating = False
        # self-pipe: the signal handler and the acquire thread wake the main thread
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        os.set_blocking(self.wake_r, False)
        self.stdin_buf = b""
        self.stdin_lines = 0
        self.stdin_closed = False

    # -- plumbing ---------------------------------------------------------

    def on_signal(self, signum, frame):
        self.terminating = True
        try:
            os.write(self.wake_w, b"T")
        except OSError:
            pass

    def drain_wake(self):
        try:
            return os.read(self.wake_r, 4096)
        except (BlockingIOError, InterruptedError):
            return b""

    def close(self):
        if self.client is not None:
            try:
                self.client.stop()  # closes the session: the server drops it at once
                self.client.close()
            except Exception:
                pass
            self.client = None

    def die(self, code, msg):
        sys.stderr.write("kazoo_peer: %s\n" % msg)
        sys.stderr.flush()
        self.close()
        sys.exit(code)

    def read_stdin(self):
        try:
            data = os.read(0, 65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self.stdin_closed = True
            return
        self.stdin_buf += data
        n = self.stdin_buf.count(b"\n")
        if n:
            self.stdin_lines += n
            self.stdin_buf = self.stdin_buf[self.stdin_buf.rfind(b"\n") + 1:]

    # -- phases -----------------------------------------------------------

    def make_lock(self, path=None):
        a = self.args
        if a.mode == "election":
            return self.client.Election(a.lock_path, a.identifier).lock
        if a.mode == "party":
            party = self.client.Party(a.lock_path, a.identifier)
            return Joined(party.path, party.node, party.join, party.leave)
        if a.mode == "lease":
            def obtain():
                return bool(NonBlockingLease(self.client, a.lock_path, datetime.timedelta(minutes=10), a.identifier))
            return Joined(a.lock_path, "lease_holder", obtain, lambda: None)
        if a.mode == "semaphore":
            return self.client.Semaphore(a.lock_path, a.identifier, max_leases=a.max_leases)
        ctor = {
            "mutex": self.client.Lock,
            "read": self.client.ReadLock,
            "write": self.client.WriteLock,
        }[a.mode]
        return ctor(path or a.lock_path, a.identifier, extra_lock_patterns=tuple(a.extra_pattern))

    def acquire(self, lock):
        """Returns True (held), False (timed out) or None (gave up on a signal)."""
        a = self.args
        timeout = None if a.timeout_ms is None else a.timeout_ms / 1000.0
        result = {}

        def worker():
            try:
                result["ok"] = lock.acquire(blocking=True, timeout=timeout)
            except LockTimeout:
                result["ok"] = False
            except CancelledError:
                result["cancelled"] = True
            except BaseException as e:  # noqa
                result["err"] = e
            finally:
                try:
                    os.write(self.wake_w, b"A")
                except OSError:
                    pass

        t = threading.Thread(target=worker, name="acquire")
        t.daemon = True
        t.start()
        deadline = None if timeout is None else time.monotonic() + timeout
        cancelled = False
        while True:
            wait = None
            if not cancelled and deadline is not None:
                wait = max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.wake_r], [], [], wait)
            woke = self.drain_wake() if ready else b""
            if b"A" in woke or not t.is_alive():
                t.join()
                break
            if not cancelled and (self.terminating or (deadline is not None and time.monotonic() >= deadline)):
                # kazoo's own timeout is per wait, not overall; enforce the overall
                # deadline (and signals) by cancelling: kazoo then deletes our node.
                lock.cancel()
                cancelled = True
        if "err" in result:
            self.die(2, "acquire: %r" % (result["err"],))
        if result.get("ok"):
            return True
        if self.terminating:
            return None
        return False

    def hold(self):
        a = self.args
        deadline = None if a.hold_ms is None else time.monotonic() + a.hold_ms / 1000.0
        while not self.terminating:
            if deadline is None:
                if self.stdin_lines > 0:
                    self.stdin_lines -= 1
                    return
                if self.stdin_closed:
                    return
                fds = [self.wake_r, 0]
                wait = None
            else:
                wait = deadline - time.monotonic()
                if wait <= 0:
                    return
                fds = [self.wake_r]
            ready, _, _ = select.select(fds, [], [], wait)
            if self.wake_r in ready:
                self.drain_wake()
            if 0 in ready:
                self.read_stdin()

    def fence_of(self, node):
        """The czxid of our node: the fencing token of this hold."""
        try:
            stat = self.client.exists(node)
        except Exception as e:
            self.die(2, "stat %s: %r" % (node, e))
        if stat is None:
            self.die(2, "our node %s is gone" % node)
        return stat.czxid

    def fence_log(self, what, fence):
        """Appends "WHAT FENCE MS kazoo-PID" to the fencing log, if there is one,
        in one O_APPEND write."""
        if not self.args.log:
            return
        line = ("%s %d %d kazoo-%d\n" % (what, fence, now_ms(), os.getpid())).encode()
        fd = os.open(self.args.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)

    def run(self):
        a = self.args
        signal.signal(signal.SIGTERM, self.on_signal)
        signal.signal(signal.SIGINT, self.on_signal)
        try:
            self.client = KazooClient(hosts=a.connect, timeout=a.session_timeout_ms / 1000.0)
            self.client.start(timeout=5)
        except Exception as e:
            self.die(2, "connect to %s: %r" % (a.connect, e))
        if self.terminating:
            self.close()
            return 0
        out("READY")
        if a.print_local:
            host, port = self.client._connection._socket.getsockname()[:2]
            out("LOCAL %s:%d" % (host, port))
        lock = self.make_lock()
        for _ in range(a.loops):
            if self.terminating:
                break
            got = self.acquire(lock)
            if got is None:
                break
            if got is False:
                out("TIMEOUT")
                self.close()
                return 1
            node = node_of(lock)
            out("ACQUIRED %s %d" % (node, now_ms()))
            fence = self.fence_of(node) if a.log else 0
            self.fence_log("start", fence)
            second = self.take_then()
            if second is None and a.then:
                lock.release()
                break
            self.hold()
            if second is not None:
                second.release()
            self.fence_log("end", fence)
            if a.abandon:
                out("ABANDONED %d" % now_ms())
                self.close()
                return 0
            try:
                lock.release()
            except Exception as e:
                self.die(2, "release: %r" % (e,))
            out("RELEASED %d" % now_ms())
        self.close()
        return 0


    def take_then(self):
        """With --then: takes the second lock on the same session, once
        --then-after's file exists; None when there is none, or a signal or
        timeout came first (its node is then gone)."""
        a = self.args
        if not a.then:
            return None
        while a.then_after and not os.path.exists(a.then_after):
            if self.terminating:
                return None
            time.sleep(0.05)
        second = self.make_lock(a.then)
        if not self.acquire(second):
            return None
        out("ACQUIRED %s %d" % (node_of(second), now_ms()))
        return second


class Joined(object):
    """A recipe held by being in it (kazoo's Party and Lease), shaped like a lock."""

    def __init__(self, path, node, join, leave):
        self.path, self.node, self._join, self._leave = path, node, join, leave

    def acquire(self, blocking=True, timeout=None):
        return self._join() is not False

    def release(self):
        self._leave()

    def cancel(self):
        pass


def node_of(lock):
    """The full path of our node: a semaphore's lease, or a lock's contender node."""
    if isinstance(lock, Semaphore):
        return lock.create_path
    return "%s/%s" % (lock.path.rstrip("/"), lock.node)


def main():
    p = argparse.ArgumentParser(prog="kazoo_peer")
    p.add_argument("connect")
    p.add_argument("lock_path")
    p.add_argument("mode", choices=["mutex", "read", "write", "semaphore", "election", "party", "lease"])
    p.add_argument("--print-local", action="store_true")
    nonneg = lambda s: int(s) if int(s) >= 0 else p.error("negative value: " + s)
    p.add_argument("--hold-ms", type=nonneg, default=None)
    p.add_argument("--timeout-ms", type=nonneg, default=None)
    p.add_argument("--session-timeout-ms", type=nonneg, default=4000)
    p.add_argument("--loops", type=nonneg, default=1)
    p.add_argument("--max-leases", type=nonneg, default=1)
    p.add_argument("--identifier", default=None)
    p.add_argument("--revocable", action="store_true")
    p.add_argument("--abandon", action="store_true")
    p.add_argument("--extra-pattern", action="append", default=[])
    p.add_argument("--log", default=None)
    p.add_argument("--then", default=None)
    p.add_argument("--then-after", default=None)
    # Values may start with "-" (e.g. --extra-pattern -lock-): glue text options to
    # their value so argparse does not take the value for an option.
    argv, raw = [], sys.argv[1:]
    i = 0
    while i < len(raw):
        if raw[i] in ("--identifier", "--extra-pattern") and i + 1 < len(raw):
            argv.append(raw[i] + "=" + raw[i + 1])
            i += 2
        else:
            argv.append(raw[i])
            i += 1
    args = p.parse_args(argv)  # bad arguments: usage on stderr, exit 2
    sys.exit(Peer(args).run())


if __name__ == "__main__":
    main()
