// CuratorPeer — an Apache Curator lock contender driven by a small line protocol,
// used by zklock's integration tests and benchmarks to contend for the same lock
// path as zklock (and kazoo_peer.py).
//
// Classpath (Debian packages libcurator-recipes-java, libzookeeper-java,
// libguava-java, libslf4j-java; found by running it — nothing else is needed):
//
//   CP=/usr/share/java/curator-recipes.jar:/usr/share/java/curator-framework.jar:/usr/share/java/curator-client.jar:/usr/share/java/zookeeper.jar:/usr/share/java/zookeeper-jute.jar:/usr/share/java/guava.jar:/usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-nop.jar
//
// (Checked with the jars' manifests stripped: all eight are needed, nothing else is.
// Debian's manifests carry Class-Path entries, so curator-recipes.jar:slf4j-nop.jar
// alone also happens to work on Debian; do not rely on that.)
//
// Compile:  javac -cp "$CP" -d OUTDIR tests/peers/CuratorPeer.java     (no warnings)
// Run:      java -cp "OUTDIR:$CP" CuratorPeer <connect-string> <lock-path> <mode> [options]
//
// Protocol (shared with kazoo_peer.py):
//   mode: mutex  -> InterProcessMutex                      node _c_<uuid>-lock-NNNNNNNNNN
//         read   -> InterProcessReadWriteLock.readLock()   node _c_<uuid>-__READ__NNNNNNNNNN
//         write  -> InterProcessReadWriteLock.writeLock()  node _c_<uuid>-__WRIT__NNNNNNNNNN
//         semaphore -> InterProcessSemaphoreV2, one lease  node leases/_c_<uuid>-lease-NNNNNNNNNN
//                      (acquirers queue on the internal mutex <lock-path>/locks/)
//         latch  -> LeaderLatch: "acquired" once leader    node _c_<uuid>-latch-NNNNNNNNNN
//         selector -> LeaderSelector: "acquired" inside takeLeadership, which returns
//                      on release                           node _c_<uuid>-lock-NNNNNNNNNN
//   --hold-ms N            hold N ms, then release (default: hold until a line is
//                          read on stdin or stdin is closed)
//   --timeout-ms N         acquire timeout; on timeout print TIMEOUT and exit 1
//   --session-timeout-ms N default 4000
//   --loops N              acquire/hold/release N times (default 1)
//   --identifier TEXT      accepted and ignored (Curator stores the client's IP)
//   --max-leases N         (semaphore) the semaphore's maximum number of leases (default 1)
//   --log FILE             append "start <czxid> <epoch-ms> curator-<pid>" to FILE once
//                          acquired and "end <czxid> <epoch-ms> curator-<pid>" just before
//                          releasing (czxid of our own node: the fencing token), one
//                          O_APPEND write per line, for the tests' fencing log
//   --then PATH            (mutex) once holding, also take the InterProcessMutex at PATH
//                          on the same client and session (one thread, as an application
//                          that nests two locks does), printing a second ACQUIRED when
//                          granted; a signal while waiting for it gives it up and
//                          releases both
//   --then-after FILE      with --then: wait until FILE exists before taking PATH
//   --abandon              when the hold ends, close the client without releasing (print
//                          ABANDONED <epoch-ms>): the node goes with the session
//   --revocable            (Curator only) makeRevocable(): when "__REVOKE__" is written
//                          to our node, print REVOKED <epoch-ms>, release, exit 0.
//                          Without it the holder ignores revocation requests.
// stdout, one line each, flushed at once:
//   READY                              connected
//   ACQUIRED <full-node-path> <epoch-ms>
//   REVOKED <epoch-ms>                 (only with --revocable)
//   RELEASED <epoch-ms>
//   TIMEOUT                            (then exit 1)
// Exit: 0 done; 1 timeout; 2 error (message on stderr; unknown options too, e.g.
// kazoo_peer's --extra-pattern).
// A chroot in the connect string must already exist (Curator fails with NoNode; kazoo
// would create it). Paths printed are relative to the chroot.
// SIGTERM/SIGINT: if holding, release (prints RELEASED) and exit 0; if waiting, give up
// (own node deleted, session closed) and exit 0 without printing.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import java.util.concurrent.CountDownLatch;

import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.data.Stat;

public class CuratorPeer {
    private static final LinkedBlockingQueue<String> events = new LinkedBlockingQueue<>();
    private static volatile boolean terminating = false;
    private static volatile boolean acquiring = false;
    private static volatile boolean stdinClosed = false;
    private static Thread mainThread;
    private static CuratorFramework client;

    private static void out(String line) {
        synchronized (System.out) {
            System.out.println(line);
            System.out.flush();
        }
    }

    private static void die(int code, String msg) {
        System.err.println("CuratorPeer: " + msg);
        System.err.flush();
        closeClient();
        System.exit(code);
    }

    private static void closeClient() {
        if (client != null) {
            Thread.interrupted();
            try {
                client.close();
            } catch (Throwable t) {
                // best effort
            }
            client = null;
        }
    }

    private static void usage(String why) {
        die(2, why + "\nusage: CuratorPeer <connect-string> <lock-path> mutex|read|write|semaphore"
                + " [--hold-ms N] [--timeout-ms N] [--session-timeout-ms N] [--loops N]"
                + " [--identifier TEXT] [--revocable] [--abandon] [--max-leases N] [--log FILE]");
    }

    private static long parseLong(String opt, String v) {
        try {
            long n = Long.parseLong(v);
            if (n < 0) usage(opt + " must be >= 0");
            return n;
        } catch (NumberFormatException e) {
            usage(opt + ": not a number: " + v);
            return 0;
        }
    }

    /** The full path of our own lock node: InterProcessMutex.getLockPath() (protected). */
    private static String ownNode(InterProcessMutex lock, String lockPath, String marker) {
        try {
            Method m = InterProcessMutex.class.getDeclaredMethod("getLockPath");
            m.setAccessible(true);
            Object p = m.invoke(lock);
            if (p != null) return (String) p;
        } catch (Throwable t) {
            // fall through to the listing below
        }
        return sessionNode(lockPath, marker);
    }

    /** The child of lockPath with our session as ephemeralOwner and our kind marker. */
    private static String sessionNode(String lockPath, String marker) {
        try {
            long sid = client.getZookeeperClient().getZooKeeper().getSessionId();
            List<String> children = client.getChildren().forPath(lockPath);
            String base = lockPath.endsWith("/") ? lockPath : lockPath + "/";
            for (String c : children) {
                if (!c.contains(marker)) continue;
                Stat st = client.checkExists().forPath(base + c);
                if (st != null && st.getEphemeralOwner() == sid) return base + c;
            }
        } catch (Exception e) {
            // ignore
        }
        return "?";
    }

    public static void main(String[] args) {
        mainThread = Thread.currentThread();
        if (args.length < 3) usage("missing arguments");
        String connect = args[0];
        String lockPath = args[1];
        String mode = args[2];
        long holdMs = -1, timeoutMs = -1, sessionMs = 4000, loops = 1, maxLeases = 1;
        boolean revocable = false, abandon = false;
        String logFile = null;
        String thenPath = null, thenAfter = null;
        for (int i = 3; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--revocable":
                    revocable = true;
                    continue;
                case "--abandon":
                    abandon = true;
                    continue;
                case "--hold-ms":
                case "--timeout-ms":
                case "--session-timeout-ms":
                case "--loops":
                case "--max-leases":
                case "--identifier":
                case "--log":
                case "--then":
                case "--then-after":
                    if (i + 1 >= args.length) usage(a + " needs a value");
                    String v = args[++i];
                    if (a.equals("--log")) logFile = v;
                    if (a.equals("--then")) thenPath = v;
                    if (a.equals("--then-after")) thenAfter = v;
                    if (a.equals("--hold-ms")) holdMs = parseLong(a, v);
                    else if (a.equals("--timeout-ms")) timeoutMs = parseLong(a, v);
                    else if (a.equals("--session-timeout-ms")) sessionMs = parseLong(a, v);
                    else if (a.equals("--loops")) loops = parseLong(a, v);
                    else if (a.equals("--max-leases")) maxLeases = parseLong(a, v);
                    // --identifier: ignored, Curator stores the client's IP address
                    continue;
                default:
                    usage("unknown option: " + a);
            }
        }
        String marker;
        switch (mode) {
            case "mutex": marker = "-lock-"; break;
            case "read": marker = "__READ__"; break;
            case "write": marker = "__WRIT__"; break;
            case "semaphore": marker = "-lease-"; break;
            case "latch": marker = "-latch-"; break;
            case "selector": marker = "-lock-"; break;
            default: usage("unknown mode: " + mode); return;
        }

        installSignalHandlers();

        try {
            client = CuratorFrameworkFactory.builder()
                    .connectString(connect)
                    .sessionTimeoutMs((int) sessionMs)
                    .connectionTimeoutMs(5000)
                    .retryPolicy(new ExponentialBackoffRetry(100, 3))
                    .build();
            client.start();
            if (!client.blockUntilConnected(5000, TimeUnit.MILLISECONDS)) {
                die(2, "could not connect to " + connect + " within 5000 ms");
            }
        } catch (Exception e) {
            die(2, "connect: " + e);
        }
        out("READY");

        Contender lock;
        if (mode.equals("latch")) {
            lock = new LatchContender(new LeaderLatch(client, lockPath), lockPath);
        } else if (mode.equals("selector")) {
            lock = new SelectorContender(client, lockPath);
        } else if (mode.equals("semaphore")) {
            lock = new SemaphoreContender(new InterProcessSemaphoreV2(client, lockPath, (int) maxLeases), lockPath);
        } else {
            InterProcessMutex mutex;
            if (mode.equals("mutex")) {
                mutex = new InterProcessMutex(client, lockPath);
            } else {
                InterProcessReadWriteLock rw = new InterProcessReadWriteLock(client, lockPath);
                mutex = mode.equals("read") ? rw.readLock() : rw.writeLock();
            }
            if (revocable) {
                mutex.makeRevocable(l -> events.offer("REVOKE"));
            }
            lock = new MutexContender(mutex, lockPath, marker);
        }
        if (holdMs < 0) {
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(System.in))) {
                    while (r.readLine() != null) events.offer("LINE");
                } catch (Exception e) {
                    // treat as closed
                }
                stdinClosed = true;
                events.offer("EOF");
            }, "stdin-reader");
            reader.setDaemon(true);
            reader.start();
        }

        boolean revoked = false;
        for (long loop = 0; loop < loops && !terminating && !revoked; loop++) {
            boolean ok;
            acquiring = true;
            try {
                if (terminating) break;
                ok = lock.acquire(timeoutMs);
            } catch (Exception e) {
                acquiring = false;
                Thread.interrupted();
                if (terminating) break; // gave up waiting; closing the session removes the node
                die(2, "acquire: " + e);
                return;
            }
            acquiring = false;
            Thread.interrupted();
            if (!ok) {
                if (terminating) break;
                out("TIMEOUT");
                closeClient();
                System.exit(1);
            }
            String node = lock.node();
            out("ACQUIRED " + node + " " + System.currentTimeMillis());
            long fence = logFile == null ? 0 : fenceOf(node);
            fenceLog(logFile, "start", fence);
            InterProcessMutex second = thenPath == null ? null : takeThen(thenPath, thenAfter);
            if (thenPath != null && second == null) {
                try {
                    lock.release();
                } catch (Exception e) {
                    die(2, "release: " + e);
                }
                break;
            }

            // hold
            long deadline = holdMs >= 0 ? System.currentTimeMillis() + holdMs : Long.MAX_VALUE;
            while (!terminating) {
                if (holdMs < 0 && stdinClosed) break;
                String ev;
                try {
                    if (holdMs >= 0) {
                        long left = deadline - System.currentTimeMillis();
                        if (left <= 0) break;
                        ev = events.poll(left, TimeUnit.MILLISECONDS);
                        if (ev == null) break;
                    } else {
                        ev = events.take();
                    }
                } catch (InterruptedException e) {
                    break; // only the TERM handler interrupts us
                }
                if (ev.equals("REVOKE")) {
                    out("REVOKED " + System.currentTimeMillis());
                    revoked = true;
                    break;
                }
                if (ev.equals("TERM")) break;
                if (holdMs < 0 && (ev.equals("LINE") || ev.equals("EOF"))) break;
            }

            Thread.interrupted();
            fenceLog(logFile, "end", fence);
            if (abandon) {
                out("ABANDONED " + System.currentTimeMillis());
                closeClient();
                System.exit(0);
            }
            try {
                if (second != null) second.release();
                lock.release();
            } catch (Exception e) {
                die(2, "release: " + e);
            }
            out("RELEASED " + System.currentTimeMillis());
        }
        closeClient();
        System.exit(0);
    }

    /** The czxid of our node: the fencing token of this hold. */
    /**
     * With --then: takes the mutex at path on the same client, once thenAfter (if any)
     * exists; null when a signal came first (Curator then deletes our node).
     */
    private static InterProcessMutex takeThen(String path, String thenAfter) {
        while (thenAfter != null && !new java.io.File(thenAfter).exists()) {
            if (terminating) return null;
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                return null;
            }
        }
        InterProcessMutex second = new InterProcessMutex(client, path);
        acquiring = true;
        try {
            if (terminating) return null;
            second.acquire();
        } catch (Exception e) {
            if (!terminating) die(2, "acquire " + path + ": " + e);
            return null;
        } finally {
            acquiring = false;
            Thread.interrupted();
        }
        out("ACQUIRED " + ownNode(second, path, "-lock-") + " " + System.currentTimeMillis());
        return second;
    }

    private static long fenceOf(String node) {
        try {
            Stat stat = client.checkExists().forPath(node);
            if (stat == null) die(2, "our node " + node + " is gone");
            return stat.getCzxid();
        } catch (Exception e) {
            die(2, "stat " + node + ": " + e);
            return 0;
        }
    }

    /** Appends "WHAT FENCE MS curator-PID" to the fencing log, if there is one. */
    private static void fenceLog(String logFile, String what, long fence) {
        if (logFile == null) return;
        String line = what + " " + fence + " " + System.currentTimeMillis() + " curator-"
                + ProcessHandle.current().pid() + "\n";
        try {
            java.nio.file.Files.write(java.nio.file.Paths.get(logFile),
                    line.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        } catch (Exception e) {
            die(2, "write " + logFile + ": " + e);
        }
    }

    /**
     * SIGTERM/SIGINT: set the flag, wake the main thread (which owns the lock: Curator
     * locks must be released by the acquiring thread). sun.misc.Signal is used through
     * reflection so that javac prints no "internal proprietary API" warnings.
     */
    private static void installSignalHandlers() {
        try {
            Class<?> sigC = Class.forName("sun.misc.Signal");
            Class<?> hC = Class.forName("sun.misc.SignalHandler");
            Object handler = Proxy.newProxyInstance(CuratorPeer.class.getClassLoader(),
                    new Class<?>[] {hC}, (proxy, m, a) -> {
                        switch (m.getName()) {
                            case "handle":
                                terminating = true;
                                events.offer("TERM");
                                if (acquiring) mainThread.interrupt();
                                return null;
                            case "hashCode": return System.identityHashCode(proxy);
                            case "equals": return proxy == a[0];
                            case "toString": return "CuratorPeer.SignalHandler";
                            default: return null;
                        }
                    });
            Method handle = sigC.getMethod("handle", sigC, hC);
            for (String name : new String[] {"TERM", "INT"}) {
                handle.invoke(null, sigC.getConstructor(String.class).newInstance(name), handler);
            }
        } catch (Throwable t) {
            // no signal support: the JVM's default handling applies
        }
    }

    /** What the peer acquires: a Curator lock, or one lease of a semaphore. */
    private interface Contender {
        /** Acquires, waiting at most timeoutMs (forever when negative); false on timeout. */
        boolean acquire(long timeoutMs) throws Exception;

        /** The full path of our node once acquired. */
        String node();

        void release() throws Exception;
    }

    private static final class MutexContender implements Contender {
        private final InterProcessMutex mutex;
        private final String lockPath;
        private final String marker;

        MutexContender(InterProcessMutex mutex, String lockPath, String marker) {
            this.mutex = mutex;
            this.lockPath = lockPath;
            this.marker = marker;
        }

        public boolean acquire(long timeoutMs) throws Exception {
            if (timeoutMs >= 0) return mutex.acquire(timeoutMs, TimeUnit.MILLISECONDS);
            mutex.acquire();
            return true;
        }

        public String node() {
            return ownNode(mutex, lockPath, marker);
        }

        public void release() throws Exception {
            mutex.release();
        }
    }

    private static final class SemaphoreContender implements Contender {
        private final InterProcessSemaphoreV2 semaphore;
        private final String lockPath;
        private Lease lease;

        SemaphoreContender(InterProcessSemaphoreV2 semaphore, String lockPath) {
            this.semaphore = semaphore;
            this.lockPath = lockPath;
        }

        public boolean acquire(long timeoutMs) throws Exception {
            lease = timeoutMs >= 0 ? semaphore.acquire(timeoutMs, TimeUnit.MILLISECONDS) : semaphore.acquire();
            return lease != null;
        }

        public String node() {
            String base = lockPath.endsWith("/") ? lockPath : lockPath + "/";
            return base + "leases/" + lease.getNodeName();
        }

        public void release() throws Exception {
            semaphore.returnLease(lease);
            lease = null;
        }
    }

    /** Curator's LeaderLatch: leads while its node is the lowest. */
    private static final class LatchContender implements Contender {
        private final LeaderLatch latch;
        private final String lockPath;

        LatchContender(LeaderLatch latch, String lockPath) {
            this.latch = latch;
            this.lockPath = lockPath;
        }

        public boolean acquire(long timeoutMs) throws Exception {
            latch.start();
            if (timeoutMs >= 0) return latch.await(timeoutMs, TimeUnit.MILLISECONDS);
            latch.await();
            return true;
        }

        public String node() {
            String ours = latch.getOurPath();
            return ours != null ? ours : sessionNode(lockPath, "-latch-");
        }

        public void release() throws Exception {
            latch.close();
        }
    }

    /** Curator's LeaderSelector: leads while takeLeadership runs, until release. */
    private static final class SelectorContender implements Contender {
        private final LeaderSelector selector;
        private final String lockPath;
        private final CountDownLatch leading = new CountDownLatch(1);
        private final CountDownLatch done = new CountDownLatch(1);

        SelectorContender(CuratorFramework client, String lockPath) {
            this.lockPath = lockPath;
            this.selector = new LeaderSelector(client, lockPath, new LeaderSelectorListenerAdapter() {
                @Override
                public void takeLeadership(CuratorFramework c) throws Exception {
                    leading.countDown();
                    done.await();
                }
            });
        }

        public boolean acquire(long timeoutMs) throws Exception {
            selector.start();
            if (timeoutMs >= 0) return leading.await(timeoutMs, TimeUnit.MILLISECONDS);
            leading.await();
            return true;
        }

        public String node() {
            return sessionNode(lockPath, "-lock-");
        }

        public void release() throws Exception {
            done.countDown();
            selector.close();
        }
    }
}
