// Writes a transaction log of at least BYTES bytes into DIR with ZooKeeper's
// own FileTxnLog, as a lock storm would make it, for the history benchmark:
// sessions that come, create an ephemeral-sequential contender under one of
// 100 locks with a zklock-sized owner record, hold, delete it (some in a
// multi that writes an end record into the lock's data) and close; every
// 100,000 transactions the log rolls, as a server's does. Much faster than
// a real storm, and the records are exactly the server's.
//
// With a SHAPE, it writes instead one of the logs that once made history
// slow or large (BYTES is then ignored; N scales it):
//
//   readers N        N HBase readers (read-N) in one directory, all holding
//   waiters N        the control: N generic contenders (lock-N) in one
//                    directory, one holding and the rest queued
//   mixed-readers N  N readers in one directory, alternately kazoo's and
//                    Curator's (for --overlaps)
//   end-record N     N contenders, then one multi that deletes them all
//                    beside an end record naming each
//   leases N         one session holds a Curator semaphore's internal lock
//                    and makes N leases, then N other transactions follow
//   empty-multi N    one multi of N empty operations
//   big-snapshot N   no log: a gzip snapshot (snapshot.N.gz) of 16
//                    ephemeral -lock- nodes, each with a name and data of
//                    N bytes
//
// Usage: java -cp ZOOKEEPER_JARS WriteTxnLog DIR BYTES [SHAPE N]
import java.io.DataOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.Adler32;
import java.util.zip.CheckedOutputStream;
import java.util.zip.GZIPOutputStream;
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
        if (args.length > 2) {
            int n = Integer.parseInt(args[3]);
            log = new FileTxnLog(dir);
            if (args[2].equals("big-snapshot")) {
                bigSnapshot(dir, n);
            } else {
                shape(args[2], n);
            }
            log.commit();
            log.close();
            System.out.println("WROTE " + zxid + " transactions (" + args[2] + " " + n + ")");
            return;
        }
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

    static final String UUID = "8f2e6b1c-5a3d-4e7f-9b0a-1c2d3e4f5a6b";
    static final long TIME = 1_780_000_000_000L;

    static CreateTxn ephemeral(String path, String data) {
        return new CreateTxn(path, data.getBytes(StandardCharsets.UTF_8), ZooDefs.Ids.OPEN_ACL_UNSAFE, true, 1);
    }

    // The shapes that made history slow or large, each at scale n.
    static void shape(String shape, int n) throws Exception {
        long session = 0x2000000000000L;
        switch (shape) {
            case "readers":
            case "waiters":
                String stem = shape.equals("readers") ? "read-" : "lock-";
                for (int i = 0; i < n; i++) {
                    append(session + i, 1, TIME + i, ZooDefs.OpCode.create,
                        ephemeral(String.format("/hbase/table-lock/t/%s%010d", stem, i), "r"));
                }
                break;
            case "mixed-readers":
                for (int i = 0; i < n; i++) {
                    String name = i % 2 == 0
                        ? String.format("%032x__rlock__%010d", i, i)
                        : String.format("_c_%s-__READ__%010d", UUID, i);
                    append(session + i, 1, TIME + i, ZooDefs.OpCode.create, ephemeral("/rw/" + name, "reader"));
                }
                break;
            case "end-record":
                StringBuilder record = new StringBuilder("{\"zklock_end\":{\"version\":1,\"nodes\":[");
                List<Txn> deletes = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    String name = String.format("_c_%s-lock-%010d", UUID, i);
                    append(session, i + 1, TIME + i, ZooDefs.OpCode.create, ephemeral("/l/" + name, ""));
                    record.append(i == 0 ? "" : ",").append("{\"node\":\"").append(name)
                        .append("\",\"session\":\"0x").append(Long.toHexString(session)).append("\"}");
                    deletes.add(new Txn(ZooDefs.OpCode.delete, bytesOf(new DeleteTxn("/l/" + name))));
                }
                record.append("],\"how\":\"broken\",\"by\":{\"user\":\"ops\",\"host\":\"h\",\"pid\":7},"
                    + "\"reason\":\"bench\",\"ran\":null}}");
                List<Txn> ops = new ArrayList<>();
                ops.add(new Txn(ZooDefs.OpCode.setData,
                    bytesOf(new SetDataTxn("/l", record.toString().getBytes(StandardCharsets.UTF_8), 1))));
                ops.addAll(deletes);
                append(session + 1, 1, TIME + n, ZooDefs.OpCode.multi, new MultiTxn(ops));
                break;
            case "leases":
                append(session, 1, TIME, ZooDefs.OpCode.create,
                    ephemeral(String.format("/s/locks/_c_%s-lock-%010d", UUID, 0), ""));
                for (int i = 0; i < n; i++) {
                    append(session, i + 2, TIME + i, ZooDefs.OpCode.create,
                        ephemeral(String.format("/s/leases/_c_%s-lease-%010d", UUID, i), ""));
                }
                for (int i = 0; i < n; i++) {
                    append(session + 1 + i, 1, TIME + n + i, ZooDefs.OpCode.setData,
                        new SetDataTxn("/other", "x".getBytes(StandardCharsets.UTF_8), i));
                }
                break;
            case "empty-multi":
                List<Txn> empty = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    empty.add(new Txn(ZooDefs.OpCode.check, new byte[0]));
                }
                append(session, 1, TIME, ZooDefs.OpCode.multi, new MultiTxn(empty));
                break;
            default:
                throw new IllegalArgumentException("no shape " + shape);
        }
    }

    // A gzip snapshot, written field by field as FileSnap writes it: the
    // root, /l, and 16 ephemeral -lock- nodes of session 0x77, each with a
    // name and data of n bytes, the name ending in its sequence number.
    static void bigSnapshot(File dir, int n) throws Exception {
        File file = new File(dir, "snapshot.100.gz");
        byte[] big = new byte[n];
        Arrays.fill(big, (byte) 'a');
        String stem = "/l/" + new String(big, 0, n - 16, StandardCharsets.UTF_8);
        Adler32 sum = new Adler32();
        try (CheckedOutputStream checked = new CheckedOutputStream(
                new GZIPOutputStream(new FileOutputStream(file), 1 << 16), sum);
             DataOutputStream out = new DataOutputStream(checked)) {
            out.writeInt(0x5a4b534e); // ZKSN
            out.writeInt(2);
            out.writeLong(-1);
            out.writeInt(1); // one session
            out.writeLong(0x77);
            out.writeInt(30000);
            out.writeInt(0); // no cached ACLs
            writeNode(out, "".getBytes(StandardCharsets.UTF_8), new byte[0], 0, 0);
            writeNode(out, "/l".getBytes(StandardCharsets.UTF_8), new byte[0], 0, 1);
            for (int i = 0; i < 16; i++) {
                byte[] path = (stem + String.format("-lock-%010d", i)).getBytes(StandardCharsets.UTF_8);
                writeNode(out, path, big, 0x77, 2 + i);
            }
            writeString(out, "/");
            out.flush();
            out.writeLong(sum.getValue());
            writeString(out, "/");
        }
        // The log after it: one transaction, which ends the first node's hold.
        zxid = 0x100;
        append(0x77, 1, TIME + 100, ZooDefs.OpCode.delete,
            new DeleteTxn(stem + String.format("-lock-%010d", 0)));
    }

    static void writeString(DataOutputStream out, String text) throws Exception {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        out.writeInt(bytes.length);
        out.write(bytes);
    }

    static void writeNode(DataOutputStream out, byte[] path, byte[] data, long owner, long zxid) throws Exception {
        out.writeInt(path.length);
        out.write(path);
        out.writeInt(data.length);
        out.write(data);
        out.writeLong(-1); // the ACL: none
        out.writeLong(zxid); // czxid
        out.writeLong(zxid); // mzxid
        out.writeLong(TIME + zxid); // ctime
        out.writeLong(TIME + zxid); // mtime
        out.writeInt(0); // version
        out.writeInt(0); // cversion
        out.writeInt(0); // aversion
        out.writeLong(owner);
        out.writeLong(zxid); // pzxid
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
