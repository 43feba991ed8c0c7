//! `zklock ls [PATH]`: every lock under PATH, recursively, one line each.

use anyhow::Result;
use comfy_table::Table;
use serde::Serialize;

use crate::config::Globals;
use crate::exit::ExitStatus;
use crate::model::{self, Depth, Lock, WalkProgress};
use crate::output::{self, Format, Printer, Progress, Report};
use crate::zk::{self, Session};

/// Short examples for `zklock ls -h`.
pub const EXAMPLES: &str = "\
Examples:
  zklock ls                        every lock under /locks
  zklock ls app -o json            every lock under /locks/app, as JSON
  zklock ls /hbase/table-lock      HBase's table locks";

/// What every inspection command's man page says about locks and their JSON.
pub const LOCKS_EXPLAINED: &str = "\
What is a lock: a node whose children are lock contenders of any dialect
zklock knows: Curator (_c_<uuid>-lock-N, -__READ__N, -__WRIT__N), kazoo
(<hex32>__lock__N, __rlock__N), HBase 1.x (read-N, write-N), ZooKeeper's
recipe (x-<session>-N), generic (lock-N, <anything>-lock-N); or a semaphore:
Curator's (<path>/leases/_c_<uuid>-lease-N, acquirers queued in
<path>/locks/) or kazoo's (<path>/<hex32> leases, the maximum in <path>'s
data, acquirers queued in <path>-__lock__, which must exist). A contender
must also be a node its library makes: ephemeral (owned by a session);
persistent only for kazoo's names and zklock's own --ttl nodes (zklock's
owner record as data). Leases are ephemeral. A persistent lock-0000000001,
write-N, read-N or x-<digits>-N is application data (ensembles are shared
with Kafka, HBase and others whose nodes end in ten digits too). Other
children are not contenders: never shown, never counted. A lock with no
contender left is
not a lock any more (it is shown as a plain node). kind is mutex,
read-write (some contender reads or writes) or semaphore; dialect is the
contenders' library, or mixed when several libraries queue on one node: they
are still ordered by sequence number (signed, so wrapped negative numbers
come first), and who holds is decided as zklock's own lock decides it.
Semaphores: every lease holds, except a Curator lease whose client still
holds the internal mutex (it waits for a lease to go); acquirers queued on
the internal mutex wait, the first for a free lease, the others on the node
ahead.

JSON, a lock: {\"path\", \"kind\", \"dialect\", \"holders\": [contender],
\"waiters\": [contender]}, holders and waiters in queue order. A contender:
{\"path\", \"name\", \"sequence\", \"mode\", \"session\", \"ctime_ms\", \"age_ms\",
\"fence\", \"data\", \"owner\", \"waiting_on\", \"table_lock\"}:
  sequence    the sequence suffix; null for kazoo's leases, which have none
  mode        exclusive, shared, or lease (a semaphore's contenders)
  session     the owner session, 0x...; 0x0 for a persistent (TTL) node
  fence       the fencing token: the node's czxid
  data        the node's data as lossy UTF-8; null when empty or unreadable
  owner       zklock's owner record {\"tool\", \"version\", \"host\", \"pid\",
              \"user\", \"command\", \"time\", \"data\"}; null for other data
  waiting_on  the full path of the node it waits on (the one just ahead; a
              reader's nearest writer ahead); null for a holder, and for a
              semaphore acquirer waiting for any lease to go
  table_lock  an HBase contender's decoded TableLock {\"table\", \"owner\",
              \"thread_id\", \"shared\", \"purpose\", \"create_time_ms\",
              \"undecoded\"} (fields null when absent; undecoded: what could
              not be decoded, escaped); null for other contenders

Reading: one session; reads go in multi-read batches of 64 (one request
each; node by node on servers before 3.6), up to 16 batches in flight:
every directory is listed, then every contender read, in path order
(component by component).
Contender nodes are leaves: zklock never lists below them. A node that goes
meanwhile is left out, so the result is not one atomic snapshot. A PATH that
does not exist exits 6; a directory below it that an ACL keeps us from
listing is skipped with a note. On a terminal, a progress line appears on
stderr when reading takes longer than a moment.";

/// The full help of `zklock ls --help` and its man page.
pub fn manual() -> String {
    format!(
        "{EXAMPLES}\n\n\
Columns: LOCK, KIND, DIALECT, HOLDERS and WAITERS (how many; a kazoo semaphore
shows holders/maximum), HELD FOR and OWNER (of the holder that has held it
longest: zklock's user@host pid, HBase's server and table, Curator's IP or
kazoo's identifier, else its session). HELD FOR is the age of that holder's
node: ZooKeeper does not record when a waiter got the lock, so for a holder
that waited first it is an upper bound. -o json prints an array of locks,
written out as they are read.

{LOCKS_EXPLAINED}"
    )
}

/// What `ls` was asked for.
#[derive(Debug)]
pub struct LsArgs {
    /// The absolute path to list below.
    pub path: String,
}

/// The locks found, as `ls` shows them.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct LockList(pub Vec<Lock>);

impl Report for LockList {
    fn table(&self) -> Table {
        let mut table = output::table(&[
            "LOCK", "KIND", "DIALECT", "HOLDERS", "WAITERS", "HELD FOR", "OWNER",
        ]);
        for lock in &self.0 {
            let oldest = lock.oldest_holder();
            let holders = match lock.max_leases {
                Some(max) => format!("{}/{max}", lock.holders.len()),
                None => lock.holders.len().to_string(),
            };
            table.add_row([
                lock.path.clone(),
                lock.kind.as_str().to_owned(),
                lock.dialect.to_string(),
                holders,
                lock.waiters.len().to_string(),
                oldest.map_or("-".to_owned(), |c| output::format_age_ms(c.age_ms)),
                oldest.map_or("-".to_owned(), |c| c.owner_text()),
            ]);
        }
        table
    }
}

/// Lists every lock under the path: streamed as JSON, or as one table
/// once everything is read.
pub async fn run(globals: &Globals, args: LsArgs) -> Result<ExitStatus> {
    let printer = &globals.printer;
    let session = zk::connect(&globals.connect).await?;
    let progress = printer.progress();
    let read = match printer.format {
        Format::Json => stream_json(&session, &args.path, progress.as_ref(), printer)
            .await
            .map(|walked| (walked, None)),
        Format::Table => collect(&session, &args.path, progress.as_ref())
            .await
            .map(|(walked, locks)| (walked, Some(LockList(locks)))),
    };
    if let Some(progress) = progress {
        progress.finish();
    }
    session.close().await;
    let (walked, table) = read?;
    if let Some(table) = table {
        printer.report(&table)?;
    }
    note_unreadable(printer, &walked);
    if walked.locks == 0 {
        printer.note(&format!("no locks under {}", args.path));
    }
    Ok(ExitStatus::Success)
}

async fn stream_json(
    session: &Session,
    path: &str,
    progress: Option<&Progress>,
    printer: &Printer,
) -> Result<WalkProgress> {
    let mut stream = printer.json_array(progress)?;
    let walked = model::walk(
        session,
        path,
        Depth::Tree,
        |p| show_progress(progress, path, p),
        |lock| stream.push(&lock),
    )
    .await?;
    stream.finish()?;
    Ok(walked)
}

/// Every lock under `path`, in path order.
pub async fn collect(
    session: &Session,
    path: &str,
    progress: Option<&Progress>,
) -> Result<(WalkProgress, Vec<Lock>)> {
    let mut locks = Vec::new();
    let walked = model::walk(
        session,
        path,
        Depth::Tree,
        |p| show_progress(progress, path, p),
        |lock| {
            locks.push(lock);
            Ok(())
        },
    )
    .await?;
    Ok((walked, locks))
}

/// Shows how far a walk of `path` has come on the progress line, if any.
pub fn show_progress(progress: Option<&Progress>, path: &str, walked: &WalkProgress) {
    if let Some(progress) = progress {
        progress.set(format!(
            "reading {path}: {} directories listed, {} nodes read, {} locks",
            walked.listed, walked.read, walked.locks
        ));
    }
}

/// Tells the person about directories the walk could not list.
pub fn note_unreadable(printer: &Printer, walked: &WalkProgress) {
    for dir in &walked.unreadable {
        printer.note(&format!(
            "skipped {dir}: permission denied by its ACL (locks below it are not shown)"
        ));
    }
}
