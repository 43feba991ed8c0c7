// The Curator side of bench/run's lock jobs: what `zklock lock PATH -- CMD`
// does, done the way a Java program would with Apache Curator: connect, take
// an InterProcessMutex, run the command, release, close.
//
// Usage: java -cp CLASSES:$CP LockCurator HOSTS PATH CMD...
// (CP: the jars of tests/support/peers.rs; bench/run compiles this file.)

import java.util.Arrays;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

public class LockCurator {
    public static void main(String[] args) throws Exception {
        String hosts = args[0];
        String path = args[1];
        String[] command = Arrays.copyOfRange(args, 2, args.length);
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(hosts)
                .sessionTimeoutMs(10000)
                .connectionTimeoutMs(5000)
                .retryPolicy(new ExponentialBackoffRetry(100, 3))
                .build();
        client.start();
        InterProcessMutex lock = new InterProcessMutex(client, path);
        lock.acquire();
        int code;
        try {
            code = new ProcessBuilder(command).inheritIO().start().waitFor();
        } finally {
            lock.release();
            client.close();
        }
        System.exit(code);
    }
}
