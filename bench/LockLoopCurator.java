// The long-lived Curator side of the handoff job: one JVM, one session,
// looping over an InterProcessMutex acquire/release, so the handoff rate it
// helps measure holds no JVM start-up. It connects, prints READY, waits
// until GO_FILE exists (so every worker starts at once, after all have
// started), takes and releases the lock LOOPS times and prints the
// wall-clock time (seconds since the epoch) at which its last release
// returned.
//
// Usage: java -cp CLASSES:$CP LockLoopCurator HOSTS PATH LOOPS GO_FILE
// (bench/run compiles this file.)

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

public class LockLoopCurator {
    public static void main(String[] args) throws Exception {
        String hosts = args[0];
        String path = args[1];
        int loops = Integer.parseInt(args[2]);
        Path go = Path.of(args[3]);
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(hosts)
                .sessionTimeoutMs(10000)
                .connectionTimeoutMs(5000)
                .retryPolicy(new ExponentialBackoffRetry(100, 3))
                .build();
        client.start();
        client.blockUntilConnected();
        InterProcessMutex lock = new InterProcessMutex(client, path);
        System.out.println("READY");
        System.out.flush();
        while (!Files.exists(go)) {
            Thread.sleep(1);
        }
        for (int i = 0; i < loops; i++) {
            lock.acquire();
            lock.release();
        }
        Instant end = Instant.now();
        System.out.printf("%d.%06d%n", end.getEpochSecond(), end.getNano() / 1000);
        System.out.flush();
        client.close();
        System.exit(0);
    }
}
