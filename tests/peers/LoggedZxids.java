// Prints the zxid of every transaction in a ZooKeeper data directory's
// logs (its version-2 directory), one per line, as the server itself reads
// them on start-up: ZooKeeper's own FileTxnLog, from the oldest log on.
// The history tests take it as the truth of what a member logged.
//
// Usage: java -cp ZOOKEEPER_JARS LoggedZxids DIR/version-2
import java.io.File;
import org.apache.zookeeper.server.persistence.FileTxnLog;
import org.apache.zookeeper.server.persistence.TxnLog.TxnIterator;

public class LoggedZxids {
    public static void main(String[] args) throws Exception {
        FileTxnLog log = new FileTxnLog(new File(args[0]));
        TxnIterator each = log.read(0);
        StringBuilder out = new StringBuilder();
        while (each.getHeader() != null) {
            out.append(Long.toHexString(each.getHeader().getZxid())).append('\n');
            if (!each.next()) {
                break;
            }
        }
        each.close();
        System.out.print(out);
    }
}
