// Writes a transaction log of at least BYTES bytes into DIR with ZooKeeper's
// own FileTxnLog, as a lock storm would make it, for the history benchmark:
// sessions that come, create an ephemeral-sequential contender under one of
// 100 locks with a zklock-sized owner record, hold, delete it (some in a
// multi that writes an end record into the lock's data) and close; every
// 100,000 transactions the log rolls, as a server's does. Much faster than
// a real storm, and the records are exactly the server's.
//
// Usage: java -cp ZOOKEEPER_JARS WriteTxnLog DIR BYTES
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.jute.BinaryOutputArchive;
import org.apache.jute.Record;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.server.persistence.FileTxnLog;
import org.apache.zookeeper.txn.CloseSessionTxn;
import org.apache.zookeeper.txn.CreateSessionTxn;
import org.apache.zookeeper.txn.CreateTxn;
import org.apache.zookeeper.txn.DeleteTxn;
import org.apache.zookeeper.txn.MultiTxn;
import org.apache.zookeeper.txn.SetDataTxn;
import org.apache.zookeeper.txn.Txn;
import org.apache.zookeeper.txn.TxnHeader;

public class WriteTxnLog {
    private static long zxid = 0;
    private static long written = 0;
    private static FileTxnLog log;

    private static void append(long session, int cxid, long time, int type, Record txn) throws Exception {
        zxid++;
        log.append(new TxnHeader(session, cxid, zxid, time, type), txn);
        // Header (32 bytes), checksum and length (12), end mark, the record.
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        txn.serialize(BinaryOutputArchive.getArchive(bytes), "txn");
        written += 45 + bytes.size();
        if (zxid % 100_000 == 0) {
            log.commit();
            log.rollLog();
        }
    }

    private static byte[] bytesOf(Record record) throws Exception {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        record.serialize(BinaryOutputArchive.getArchive(bytes), "txn");
        return bytes.toByteArray();
    }

    public static void main(String[] args) throws Exception {
        File dir = new File(args[0], "version-2");
        dir.mkdirs();
        long target = Long.parseLong(args[1]);
        FileTxnLog.setPreallocSize(4 << 20);
        log = new FileTxnLog(dir);
        long time = 1_780_000_000_000L;
        long session = 0x1000000000000L;
        long[] sequence = new long[100];
        while (written < target) {
            session++;
            time += 3;
            int lock = (int) (session % 100);
            String dirPath = "/locks/lock-" + lock;
            String node = String.format("%s/_c_%s-lock-%010d", dirPath,
                "8f2e6b1c-5a3d-4e7f-9b0a-1c2d3e4f5a6b", sequence[lock]++);
            int pid = 100000 + (int) (session % 800000);
            String data = ownerRecord(pid, time);
            append(session, 0, time, ZooDefs.OpCode.createSession, new CreateSessionTxn(30000));
            append(session, 1, time + 1, ZooDefs.OpCode.create,
                new CreateTxn(node, data.getBytes(StandardCharsets.UTF_8), ZooDefs.Ids.OPEN_ACL_UNSAFE, true, 1));
            if (session % 10 == 0) {
                String end = endRecord(node.substring(dirPath.length() + 1), session, pid + 7);
                List<Txn> ops = new ArrayList<>();
                ops.add(new Txn(ZooDefs.OpCode.setData,
                    bytesOf(new SetDataTxn(dirPath, end.getBytes(StandardCharsets.UTF_8), 1))));
                ops.add(new Txn(ZooDefs.OpCode.delete, bytesOf(new DeleteTxn(node))));
                append(session - 1, 7, time + 2, ZooDefs.OpCode.multi, new MultiTxn(ops));
            } else {
                append(session, 2, time + 2, ZooDefs.OpCode.delete, new DeleteTxn(node));
            }
            append(session, 3, time + 3, ZooDefs.OpCode.closeSession, new CloseSessionTxn(new ArrayList<>()));
        }
        log.commit();
        log.close();
        System.out.println("WROTE " + zxid + " transactions, " + written + " bytes");
    }

    // The owner record zklock writes into its node, in its field order: the
    // shape history parses for every contender.
    static String ownerRecord(int pid, long time) {
        String boot = "\"boot_id\":\"a7c828d0-3d77-43fe-b1d5-22b3f5e21c95\",\"pid_ns\":\"pid:[4026531836]\"";
        return "{\"tool\":\"zklock\",\"version\":\"0.1.0\",\"host\":\"build-07.example.com\","
            + "\"pid\":" + pid + ",\"user\":\"deploy\",\"command\":[\"./deploy.sh\"],"
            + "\"time\":\"" + java.time.Instant.ofEpochMilli(time) + "\",\"data\":null,"
            + "\"identity\":{" + boot + ",\"group\":" + (pid + 1) + ",\"group_start\":133779},"
            + "\"lineage\":{" + boot + ",\"processes\":[{\"pid\":" + pid + ",\"start\":133777},"
            + "{\"pid\":10988,\"start\":133777},{\"pid\":1572,\"start\":7537}]}}";
    }

    // The end record `zklock release` writes into the lock directory when it
    // breaks `node` of `session`.
    static String endRecord(String node, long session, int pid) {
        return "{\"zklock_end\":{\"version\":1,\"nodes\":[{\"node\":\"" + node + "\",\"session\":\"0x"
            + Long.toHexString(session) + "\"}],\"how\":\"broken\",\"by\":{\"user\":\"ops\","
            + "\"host\":\"bastion\",\"pid\":" + pid + "},\"reason\":\"bench\",\"ran\":null}}";
    }
}
