//! The help text of every subcommand that has a manual: short examples for
//! `-h`, and the manual that `--help` and the man pages show. Kept in one
//! place, apart from the clap definitions, so it reads as prose.

/// `text` with each paragraph of prose (lines that begin with no space,
/// up to a blank or an indented line) joined into one line, and every other
/// line as it is: for a reader to wrap to its own width.
pub(super) fn unbroken(text: &str) -> String {
    let mut joined = String::with_capacity(text.len());
    let mut in_prose = false;
    for line in text.lines() {
        let prose = !line.is_empty() && !line.starts_with(' ');
        if prose && in_prose {
            joined.push(' ');
        } else if !joined.is_empty() {
            joined.push('\n');
        }
        joined.push_str(line);
        in_prose = prose;
    }
    joined
}

/// `zklock -h`.
pub(super) const ZKLOCK_EXAMPLES: &str = "\
Examples:
  # run deploy.sh while holding /locks/deploy
  zklock lock deploy -- ./deploy.sh
  # every lock under /locks; the zkCli stat fields of a node
  zklock ls
  zklock stat /zookeeper
  # use an ensemble and a chroot
  ZKLOCK_HOSTS=zk1,zk2,zk3/app zklock ls";

/// `zklock lock`, `rlock` and `wlock`.
pub(super) const LOCK_EXAMPLES: &str = "\
Examples:
  # run deploy.sh holding /locks/deploy
  zklock lock deploy -- ./deploy.sh
  # give up at once (exit 1) if it is taken
  zklock lock -n deploy -- ./deploy.sh
  # wait at most 30s; exit 75 if not acquired
  zklock lock -w 30s -E 75 deploy -- make
  # run a shell command line
  zklock lock --shell deploy -- 'a && b'
  # print the token, hold until Ctrl-C
  zklock lock deploy
  # take the lock so that kazoo clients see it
  zklock lock --dialect kazoo jobs -- ./x
  # hold db and cache together (any order names the same set)
  zklock lock db cache -- ./migrate.sh
  # stop the job after an hour (exit 124), and let go
  zklock lock --max-hold 1h nightly -- ./job.sh
  # from cron on every host: run once an hour across the fleet
  zklock lock -E 0 --once-per 55m report -- ./report.sh
  # after a holder that vanished uncleanly, wait 15s before running
  zklock lock --lock-delay 15s ledger -- ./post.sh
  # before a critical write, ask whether this hold still stands
  zklock lock deploy -- sh -c 'zklock check \"$ZKLOCK_NODE\" && ./write.sh'

Across script steps:
  # held until this shell exits, or until released
  tok=$(zklock lock deploy --detach --while-pid $$)
  ./step1; ./step2
  zklock release \"$tok\"
  # held at most 10 minutes
  tok=$(zklock lock deploy --detach --lease 10m)
  # a persistent node no process holds; the server deletes it 2h after
  # its last change
  tok=$(zklock lock maint --ttl 2h)

On a secured ensemble:
  # TLS, with a client certificate
  zklock --tls --tls-ca ca.pem --tls-cert c.pem --tls-key c.key lock db
  # SASL DIGEST-MD5
  export ZKLOCK_SASL_USER=bob
  zklock --sasl digest-md5 --sasl-password-file bob.pw lock deploy
  # Kerberos, from the ticket cache
  kinit bob; zklock --sasl gssapi lock deploy -- ./x
  # only my identities may touch it
  zklock --auth-file me.auth --acl creator lock deploy
  # only alice and bob may take, give up or break it
  export ZKLOCK_ACL=sasl:alice:cdrwa,sasl:bob:cdrwa,world:anyone:r
  zklock lock deploy -- ./x

The command gets ZKLOCK_LOCK, ZKLOCK_NODE, ZKLOCK_FENCE (the node's czxid, a
fencing token that grows with every new holder), ZKLOCK_SESSION,
ZKLOCK_LOCK_DELAYED (how long --lock-delay held it back, in ms; 0 when it
did not) and ZKLOCK_HELD (every enclosing hold's node, one a line, this one
last). A
zklock the command starts, however indirectly (even through env -i or sudo),
records in its owner record the holds it is nested in, once it has checked
that the command each hold's record names is among its own ancestors (a
copied ZKLOCK_HELD proves nothing); zklock deadlocks then shows a cycle of
nested zklocks as certain. Nested in a hold of the same lock that holds now
and covers the request (anything inside an exclusive or write hold, a read
inside a read hold with no one else's writer queued), the command runs at
once under that hold, with no node of its own, and is stopped (exit 4) if
that hold ends; siblings nested in one hold all do, and may run together.
Only a zklock in the process group of the hold's command, as its user,
re-enters; one that left it (setsid, bash -m, script, timeout without
--foreground, sudo with use_pty) or runs as another user exits 7 at once. A
write lock asked inside a read hold of the same
lock (an upgrade, never granted) exits 7 at once, and of the nested zklocks
waiting in a certain wait-for cycle, which each looks for once its node is
made, on wake-ups and on a timer, the youngest exits 7 (docs/WAIT-CHAINS.md). The owner record also
carries the -w deadline, which keeps a cycle through it possible, not
certain. A --detach holder's owner record names the process that started
it (the shell that ran zklock lock --detach) and the --while-pid process;
these never end the hold (only release, --lease and --while-pid do), but a
zklock waiter they started waits as the holder's owner, so zklock
deadlocks finds the cycle of two shells that each hold one lock detached
and wait for the other's, as a possible one (never exit 7: the shell may
run its waiter in the background, or release later). zklock
exits with the command's exit code (128+n if it died of signal n), 127 or 126
if it could not run (not found, not executable), 1 if the lock was not
acquired (change with -E; the message names the holder), 3 if ZooKeeper was
unreachable, 4 if the lock was lost while held (the command is stopped:
--kill-signal, then SIGKILL after --kill-after; the message names who broke
the lock and why when their end record says so), 124 when the command ran
its --max-hold out (stopped the same way, whether or not SIGKILL was needed;
JSON cause max_hold; with --preserve-status the command's own status, as
timeout(1)). / and /zookeeper (and below) are never locks: exit 2, before
connecting.

--once-per DUR (lock and wlock, one lock, with a command) runs the command
at most once per DUR across every contender of the lock: the first to hold
it after the window opens runs, the others let go and exit 1 (or -E; JSON
cause ran_recently, with ran_at_ms, ran_by and window_opens_at_ms). The
window slides from the start of the last counted run on the clock of
ZooKeeper's leader, read from the mtime of a write the holder makes to the
lock directory, never a host's clock; a leader change switches clocks, so
choose a window a little under the period (55m for an hourly job). A run
counts when the command exits 0, or, with --once-per-even-on-failure, when
it starts (a failure or a kill counts too). The last run is kept in the end
record, which every end record carries forward with the directory's mark
(a --once-per contender's, a plain zklock's, a break, a reap); an end by
an older zklock may forget it, and so does removing the directory (by hand
or with reap --empty). The window is kept only in a lock directory zklock
made persistent itself (for --once-per, or --lock-delay, which makes a
missing directory the same way), marked so in its end record
(made_persistent): the server removes an idle container (what zklock lock
and Curator make), record and all, and shows it to clients as it shows a
persistent node. Before queueing, a contender makes a
missing directory so; makes an unmarked one with no child and no data but an
end record again, in one transaction at the version read (same ACL, same
last run); and exits 2 at once on any other (contenders of another lock,
another program's data; JSON cause once_per_directory). A run recorded more
than the window ahead of the server's clock (forged, or a leader's clock
that jumped) is not believed: zklock says so, drops it from the record and
runs; one less than that ahead is believed. A closed window is the expected
outcome on every host but one: off a terminal zklock prints nothing for it
(the exit code tells it; -v logs it, and -o json prints its JSON error), at
a terminal one line. The window belongs to the lock: two jobs under one lock
suppress each other. stat and ls show the last run; ls lists an idle
--once-per lock too.
rlock and sem refuse it (shared holders could all find the window open).

When zklock ends a hold or a wait itself (a release, a give-up, a
--max-hold stop, a lost hold's delete), it writes an end record into the
lock directory's data in the same transaction as the delete:
{\"zklock_end\": {\"version\": 1, \"nodes\": [{\"node\", \"session\"}], \"how\",
\"by\": {\"user\", \"host\", \"pid\"}, \"reason\", \"ran\", \"made_persistent\",
\"evidence\": {\"deletes\", \"exact\", \"unclean\": {\"at_ms\", \"unknown\"}}}},
how being released, gave_up, max_hold, lost (its command stopped after the
lock was lost), broken (zklock release) or reaped (zklock reap), ran the
last counted --once-per run ({\"at_ms\", \"per_ms\", \"by\"}, on the server's
clock) or null, made_persistent true in a directory zklock made persistent
(for --once-per or --lock-delay), and evidence what the records so far
know: how many deletes of the directory's children they account for, and
the latest unclean or unknown end (on the server's clock) or null. Each
writer reads the directory and writes the record before it carried
forward, at the version it read (again if it changed), only over no data
or a record: an application's data is never written over, and the delete
then goes alone. A mutex's waiter that gives up while the node ahead of it
is there never held, and writes none. watch, the exporter and a holder
whose lock was broken read it. Never where a library reads the directory's
data (a kazoo semaphore's node holds its maximum, an election belongs to
its service); a directory whose ACL refuses the write gets a plain delete.

With --lock-delay DUR, zklock keeps the lock DUR after the latest hold
before ours that ended uncleanly (a break, a reap, a lost hold) or whose end
is unknown (a delete no record tells of: an expired or closed session, a
library's release; or a directory with no record, new or removed by the
server), on the server's clock, before the command runs. An unknown end
is dated when it was first seen (by the first arrival that saw it); a
give-up carries the owed end on, so the next try waits only what is left.
A missing lock directory is made persistent (and marked so, as --once-per
marks its own), so that the server does not remove it, and the evidence
with it, while it is idle. The delay counts
within -w (one that would outlast it gives up at once); with -n a pending
delay gives up; both exit with the conflict code (JSON cause lock_delay,
with lock, left_ms and last_end: unclean or unknown). The lock is held and
watched during the delay (a loss exits 4, the command unrun); the owner
record states the delay (lock_delay_ms). It protects from holders that
cannot fence themselves (Curator and kazoo clients, paused processes) only
as far as DUR bounds their pause.

At a terminal the command runs in the terminal's foreground, as a shell job:
it can read the terminal, and Ctrl-C and Ctrl-\\ reach it directly; zklock
releases after it ends and takes the terminal back, with the terminal's
modes as they were before (a full-screen command stopped by a signal or a
lost lock leaves no raw terminal behind). Ctrl-Z does not suspend it:
zklock keeps the session that holds the lock and continues the command at
once; nor does Ctrl-Z suspend zklock while it waits or holds without a
command (it says so each time), since a stopped zklock would lose its place or the
lock. While it waits, one line on stderr shows who holds the lock and, with
-w, how much of the wait has gone ([2s/30s]). A flag that does not apply to the mode is a usage error: --kill-after,
--kill-signal and --max-hold need a command, --preserve-status needs
--max-hold, --lease and --while-pid need --detach (to bound a command, use
--max-hold), -E needs -n, -w or --once-per, and -o json applies only with --detach,
--ttl or --max-hold (its stop is a JSON error on stderr, cause max_hold).

Several locks (lock A B C -- COMMAND; also rlock and wlock) are taken only to
run a command: without -- a second word is a usage error, and so are several
locks with --detach, --ttl or sem. They are taken in one session, one after
the other in one canonical order (sorted by path, duplicates removed), so
two zklocks naming the same locks in any order never deadlock each other.
All or nothing: -n and -w cover the whole set, and giving up deletes every
node made. The command runs once all are held and is stopped (exit 4) when
any one is lost. Beside the single-lock variables, which name the first
lock in that order, it gets ZKLOCK_LOCKS, ZKLOCK_NODES and ZKLOCK_FENCES
(one a line, in that order), and ZKLOCK_HELD names every node.";

/// `zklock rlock`.
pub(super) const RLOCK_EXAMPLES: &str = "\
Examples:
  # read under /locks/config; readers share it
  zklock rlock config -- ./read-config.sh
  # give up at once (exit 1) if a writer holds or waits ahead
  zklock rlock -n config -- ./report.sh
  # wait at most 30s for the writers ahead
  zklock rlock -w 30s config -- ./report.sh
  # hold the read side until this shell exits
  tok=$(zklock rlock config --detach --while-pid $$)
  # read two configurations, both held at once
  zklock rlock config secrets -- ./render.sh

A reader waits only for the writers queued ahead of it. The options, the
command's environment and the exit codes are lock's (zklock-lock(1)).";

/// `zklock wlock`.
pub(super) const WLOCK_EXAMPLES: &str = "\
Examples:
  # write under /locks/config, alone
  zklock wlock config -- ./rewrite-config.sh
  # give up at once (exit 1) if anyone holds it
  zklock wlock -n config -- ./rewrite.sh
  # wait at most 1m; exit 75 if not acquired
  zklock wlock -w 1m -E 75 config -- ./x
  # kazoo's write lock, so kazoo readers wait
  zklock wlock --dialect kazoo config -- ./x
  # write two locks at once, all or nothing
  zklock wlock -w 1m config secrets -- ./x

A writer waits for every reader and writer queued ahead of it. The options,
the command's environment and the exit codes are lock's (zklock-lock(1)).";

/// `zklock sem`.
pub(super) const SEM_EXAMPLES: &str = "\
Examples:
  # at most 3 migrations at once, fleet-wide
  zklock sem migrate --max-leases 3 -- ./migrate.sh
  # give up at once (exit 1) if all 3 are taken
  zklock sem -n migrate --max-leases 3 -- ./migrate.sh
  # wait at most 10 minutes
  zklock sem -w 10m batch --max-leases 2 -- ./job
  # share the semaphore with kazoo clients
  zklock sem --dialect kazoo workers --max-leases 4 -- ./work
  # hold a lease until this shell exits
  tok=$(zklock sem deploy --max-leases 5 --detach --while-pid $$)

A semaphore is shared with other clients of the same path: Curator's
InterProcessSemaphoreV2 (the default: a lease is an ephemeral
<path>/leases/_c_<uuid>-lease-N, and acquirers queue on the internal mutex
<path>/locks/), or kazoo's Semaphore (--dialect kazoo: a lease is an ephemeral
<path>/<hex32>, acquirers queue on <path>-__lock__, and <path>'s data holds
the maximum). Every client must give the same --max-leases: Curator keeps no
record of it, so a client with a larger number takes more; kazoo records it,
and zklock refuses (exit 2, naming the stored number) a different one.

Every option and rule of lock applies: the command gets ZKLOCK_LOCK (the
semaphore), ZKLOCK_NODE (our lease), ZKLOCK_FENCE (the lease's czxid) and
ZKLOCK_SESSION; zklock exits with its exit code, 1 if no lease was free (-n)
or none came in time (-w; change with -E), 4 if the lease was lost (deleted,
revoked, the session expired) while held, and the command is stopped. Every
wait that gives up deletes our lease and our place in the internal mutex.
--ttl does not apply: a lease ends with its holder, and sem takes one
semaphore. A sem nested in a granted lease of the same semaphore (proven as
for lock) runs its command at once under that lease, with no lease of its
own, and is stopped (exit 4) if that lease ends.";

/// `zklock release`.
pub(super) const RELEASE_EXAMPLES: &str = "\
Examples:
  # hold in the background, release by token
  tok=$(zklock lock deploy --detach --while-pid $$)
  zklock release \"$tok\"
  # no error if it is already gone
  zklock release --if-exists \"$tok\"
  # list, then delete whatever holds /locks/deploy now
  zklock release --holders deploy --dry-run
  zklock release --holders deploy --yes
  # ask the holders to let go (__REVOKE__), delete those left after 30s
  zklock release --revoke --force-after 30s deploy
  # say why, for watch, the exporter and the holder broken
  zklock release --holders deploy --yes --reason 'stuck since Monday'

--holders and --revoke --force-after delete nodes others hold, as reap
does: on a terminal they list each holder (session, age, owner, whether
the session is connected, with a warning when it is) and ask; off a
terminal they need --yes (without it: exit 2, nothing done); --dry-run
only lists, as JSON {\"would_break\": [contender], \"end_records\":
[{\"dir\", \"end_record\"}]} with -o json: whether the end record would go
into each lock directory (false where it holds an application's data,
which the break never writes over; the prompt says the same).

Only lock contender nodes and semaphore leases are deleted, as ls and stat
show them: a name a lock library makes, on a node that library makes
(ephemeral; persistent only for kazoo's lock names and zklock's --ttl
nodes). A token naming anything else (a persistent config node called
lock-0000000001, a node with children), and
a candidate of an election or a leader node (by token, --holders or
--revoke: that would depose a service's leader), is refused with exit 2.
Each node is deleted only if it is still the node read
(same czxid and owner session) at the version read: a node that changed or
was made again meanwhile is left alone, and said so (exit 10).
--revoke writes __REVOKE__ only into holders that obey it: Curator's and
zklock's own (any dialect); kazoo, HBase and ZooKeeper-recipe holders are
reported, and only --force-after (a delete) breaks them.
A token whose node is gone exits 6 (0 with --if-exists). A zklock holder
whose node is deleted or revoked stops its command and exits 4. A release that
stops on an error prints what it did before it, then the error; a delete
refused by the parent's ACL (deleting needs DELETE on the parent) exits 5.
Each delete writes, in the same transaction, an end record into the lock
directory's data (how: broken; by: user@host and pid; --reason TEXT, at
most 4096 bytes): watch and the exporter count the end as broken, and the
broken zklock holder names who broke it and why. A directory whose ACL
refuses the write (no WRITE) gets the delete alone; a kazoo semaphore's
node, whose data is its maximum, never gets one. __REVOKE__ is written
as Curator expects it, byte for byte, and is no end record.
JSON: {\"deleted\": [path], \"revoked\": [path], \"skipped\": [{\"path\", \"reason\"}]}";

/// `zklock ls`.
pub(super) mod ls {
    /// Short examples for `zklock ls -h`.
    pub(in crate::cli) const EXAMPLES: &str = "\
Examples:
  # every lock under /locks; under /locks/app as JSON
  zklock ls
  zklock ls app -o json
  # HBase's table locks; every lock, election and leader node
  zklock ls /hbase/table-lock
  zklock ls /
  # only locks someone waits for, most waiters first
  zklock ls --contended --sort waiters
  # held for an hour or more
  zklock ls --held --older-than 1h
  # the paths of the locks build7 holds
  zklock ls --owner build7 --no-headers | awk '{print $1}'
  # every column, nothing cut
  zklock ls -o wide";

    /// What every inspection command's man page says about locks and their JSON.
    pub(in crate::cli) const LOCKS_EXPLAINED: &str = "\
What is a lock: a node whose children are lock contenders of any dialect
zklock knows: Curator (_c_<uuid>-lock-N, -__READ__N, -__WRIT__N; a writer
that downgrades adds a read node with its own sequence number, and both
hold), kazoo (<hex32>__lock__N, __rlock__N), HBase 1.x (read-N, write-N),
ZooKeeper's Java recipe (x-<session in decimal>-N), its C client's recipe
(x-<session as 16 hex digits>-N), go-zookeeper (_c_<hex32>-lock-N), generic
(lock-N, <anything>-lock-N); or a semaphore: Curator's
(<path>/leases/_c_<uuid>-lease-N, acquirers queued in <path>/locks/) or
kazoo's (<path>/<hex32> leases, the maximum in <path>'s data, acquirers
queued in <path>-__lock__, which must exist). A contender must also be a
node its library makes: ephemeral (owned by a session); persistent only for
kazoo's names and zklock's own --ttl nodes (zklock's owner record as data).
Leases are ephemeral. A persistent lock-0000000001, write-N, read-N,
x-<digits>-N or n_N is application data (ensembles are shared with Kafka,
HBase and others whose nodes end in ten digits too). Other children are not
contenders: never shown, never counted.

Elections are queues too, the lowest candidate leads: Curator's LeaderLatch
(_c_<uuid>-latch-N), Solr's overseer and shard elections
(<session>-<node>-n_N in .../election), ZooKeeper's election recipe (n_N,
ephemeral-sequential only). Curator's LeaderSelector and kazoo's Election
queue on a lock of their library and show as that lock. Leader nodes: one
ephemeral node whose owner leads, known by its name and its data: Kafka's
controller ({\"version\", \"brokerid\", \"timestamp\"}: broker N), Hadoop HA's
ActiveStandbyElectorLock (protobuf ActiveNodeInfo: namenode at host:port;
its persistent ActiveBreadCrumb is no leader), Helix's CONTROLLER/LEADER
(ZNRecord: controller id and instance), HBase 2's master (PBUF Master:
host,port,start code), Solr's overseer_elect/leader (the overseer's node).
A node with such a name that is persistent, or whose data is not that
record, is not one. Elections and leader nodes are shown, never reaped or
released: deleting one deposes a service's leader.

A lock with no contender left is
not a lock any more (it is shown as a plain node), except that ls lists an
idle --once-per lock (see ls). kind is mutex,
read-write (some contender reads or writes), semaphore, election or leader;
dialect is the
contenders' library, or mixed when several libraries queue on one node: they
are still ordered by sequence number (signed, so wrapped negative numbers
come first), and who holds is decided as zklock's own lock decides it.
Semaphores: every lease holds, except a Curator lease whose client still
holds the internal mutex (it waits for a lease to go); acquirers queued on
the internal mutex wait, the first for a free lease, the others on the node
ahead.

JSON, a lock: {\"path\", \"kind\", \"dialect\", \"last_run\", \"holders\":
[contender], \"waiters\": [contender]}, holders and waiters in queue order;
last_run (ls and stat only) is the last counted --once-per run {\"at_ms\",
\"per_ms\", \"by\", \"window_opens_at_ms\"}, or null. A contender:
{\"path\", \"name\", \"sequence\", \"mode\", \"session\", \"ctime_ms\", \"age_ms\",
\"fence\", \"data\", \"owner\", \"waiting_on\", \"table_lock\", \"client\",
\"watching\", \"connection\"}:
  sequence    the sequence suffix; null for kazoo's leases, which have
              none
  mode        exclusive, shared, or lease (a semaphore's contenders)
  session     the owner session, 0x...; 0x0 for a persistent (TTL) node
  fence       the fencing token: the node's czxid
  data        the node's data as lossy UTF-8; null when empty or
              unreadable
  owner       zklock's owner record {\"tool\", \"version\", \"host\", \"pid\",
              \"user\", \"command\", \"time\", \"data\"}; null for other data
  waiting_on  the full path of the node it waits on (the one just
              ahead; a reader's nearest writer ahead); null for a
              holder, and for a semaphore acquirer waiting for any
              lease to go
  table_lock  an HBase contender's decoded TableLock {\"table\", \"owner\",
              \"thread_id\", \"shared\", \"purpose\", \"create_time_ms\",
              \"undecoded\"} (fields null when absent; undecoded: what
              could not be decoded, escaped); null for other contenders
  client      who is behind the session: {\"address\" (host:port it
              connects from), \"server\" (the member it is connected to),
              \"connected\"}; address and server null and connected false
              when no member has a connection for it (its client is
              gone or cut off; its nodes stay until the session
              expires); null when unknown
  watching    a waiter's session watches the node it waits on
              (true/false); null for holders and when unknown. A waiter
              that watches nothing will not wake when its turn comes
  connection  connected (some member lists the session), disconnected
              (every member's own list is in hand, they cover the
              ensemble, and none lists it: its client is gone or cut
              off, and it may still come back until the server expires
              the session) or unknown (no list names it, and some
              member gave no list proven its own, or some member may
              have gone unasked); null for a node without a session
              (persistent, TTL). The tables' CONNECTED column says yes,
              no, unknown or -

Sessions: every member is asked at once, each within 3 s, with the cons
(and, for stat, wchc) four-letter words on its client port, or, when it
refuses them (4lw.commands.whitelist: srvr alone by default since 3.5),
its AdminServer's connections (and watches) commands over HTTP, on its
--admin-port: PORT for every member (default 8080), HOST:CLIENTPORT=PORT
for one (repeatable), since members sharing a host listen on different
ports and /zookeeper/config names none. An AdminServer's list counts for a
member only when the same AdminServer's configuration gives that member's
client port, and the server id /zookeeper/config gives its address where
it gives one: another member's list would leave out every session
connected to this one. The members are those of the connect string and
those /zookeeper/config names with a client address (observers too), read
once the session is open. A server it names without one is heard from when
an AdminServer proved its id, or as one of the members on its host that
answered cons, one member for one server. An empty /zookeeper/config is a
standalone server's; where it cannot be read (3.4 keeps none; an ACL), the
lists are whole only when every member says (srvr) that it runs alone. At
most 256 members are asked. One survey per command, however many locks.
When a member gives no list of its own, or the lists do not cover the
ensemble, connection is unknown for every session no list names, client
is null, and one note on stderr says why.

Reading: one session; reads go in multi-read batches of 64 (one request
each; node by node on servers before 3.6), up to 16 batches in flight:
every directory is listed, then every contender read, in path order
(component by component).
Contender nodes are leaves: zklock never lists below them. A node that goes
meanwhile is left out, so the result is not one atomic snapshot. A PATH
named that does not exist exits 6 (for ls, an absent default root is no
locks); a directory below it that an ACL keeps us from
listing is skipped with a note. On a terminal, a progress line appears on
stderr when reading takes longer than a moment.";

    /// The full help of `zklock ls --help` and its man page.
    pub(in crate::cli) fn manual() -> String {
        format!(
            "{EXAMPLES}\n\n\
Columns: LOCK, KIND, DIALECT (-o wide), HOLDERS and WAITERS (how many; a
kazoo semaphore shows holders/maximum), HELD FOR, CONNECTED (-o wide),
HOST (-o wide) and OWNER (of the holder that has held it longest: CONNECTED
is yes,
no when every member's own list is in hand and none lists its session,
unknown when they are not (see Sessions), - without a session; HOST is the
address its client
connects from, disconnected when its session has no connection now, - when
unknown; OWNER is zklock's user@host pid and the command as ps shows it
(its arguments only when recorded with --record-command), HBase's server
and table, a leader node's decoded leader, Curator's IP or kazoo's
identifier, else its session). HELD FOR is the age of that holder's node: ZooKeeper does not
record when a waiter got the lock, so for a holder that waited first it is
an upper bound. -o json prints an array of locks,
written out as they are read.

Filters, for the table and JSON alike (every one given must hold):
--contended (someone waits), --held (someone holds), --older-than DUR (the
oldest holder has held it at least DUR), --owner TEXT (a holder's OWNER, as
shown, contains TEXT), --dialect D (a dialect, or mixed). --sort path (the
default, printed as read), age (longest held first, free locks last) or
waiters (most first; these two read everything before printing).
--no-headers leaves out the header line. The default root absent (a fresh
cluster) or empty is no error: no locks, exit 0, an empty table or [].

--once-per locks: -o json gives each lock its last counted run, last_run
(as stat does; null when none). An idle --once-per lock, whose directory
is empty between runs and keeps the run in its end record, is listed with
0 holders and 0 waiters, its kind and dialect those of the nodes the record
names; the filters leave it out as any free lock. For this the listing
reads, in its batches, the data of every lock directory whose contenders'
ends are recorded there and of every empty node under PATH: one more read
each. -o prometheus reads neither and lists no idle lock.

The default table shows LOCK, KIND, HOLDERS, WAITERS, HELD FOR and OWNER,
fitted to the terminal's width (80 columns when stdout is not a terminal,
or COLUMNS when set): a row too wide cuts OWNER between words, then leaves
out OWNER, KIND and HELD FOR in that order; LOCK and the counts stay. -o
wide adds DIALECT, CONNECTED and HOST and cuts, wraps and fits nothing (--no-trunc is
its alias).

Metrics (-o prometheus): the Prometheus text format, as node_exporter's
textfile collector and promtool read it, for the locks that pass the
filters, each series labelled lock, kind and dialect (owners never become
labels): zklock_lock_holders, zklock_lock_waiters,
zklock_lock_holder_age_seconds (the oldest holding node's age, which
includes any time it waited; absent when free),
zklock_lock_oldest_wait_seconds (absent when nobody waits),
zklock_lock_disconnected_holders (absent when some member could not be
asked), zklock_deadlock_cycles (label certain, \"true\" or \"false\": the
wait-for cycles deadlocks finds, among every lock under PATH whatever the
filters; possible when a -w deadline, a semaphore, a session whose process
zklock cannot see or a detached holder is part of it) and zklock_scrape_duration_seconds. --output-file FILE replaces FILE
whole: written to a hidden temporary file beside it, then renamed. --sort
and --no-headers do not apply (usage error). A label is the lock's path
exactly (only \\\\, \\\" and \\n escaped); on a terminal, control characters
are shown escaped, and stderr says so. docs/MONITORING.md has the
reference and alert rules; zklock exporter serves the same live.

Tables never cut an identifier (paths, node names, session ids, pids): only
free text (OWNER) is cut, with an ellipsis, never between a word and the
number after it (pid 2905). A row that cannot fit even so (a path longer
than the line) wraps its identifier within its column onto the next
lines, each line it goes on from ending in the mark \u{21b5} (U+21B5); the pieces,
joined without the marks, are the whole path. Column widths come from the
first 500 rows; later rows print as they come. Points in time are local time with date and zone; spans, like
HELD FOR, are durations. With -o json, stdout holds one whole document or
nothing, and an error goes to stderr as {{\"error\", \"exit_code\", \"cause\"}}
(see JSON ERRORS for the causes).

{LOCKS_EXPLAINED}"
        )
    }
}

/// `zklock check`.
pub(super) mod check {
    /// Short examples for `zklock check -h`.
    pub(in crate::cli) const EXAMPLES: &str = "\
Examples:
  # in the command under a lock, before a critical write
  zklock check \"$ZKLOCK_NODE\" --fence \"$ZKLOCK_FENCE\" && ./write.sh
  # from the resource: does this token hold, as JSON
  zklock check -o json /locks/deploy/_c_...-lock-0000000007";

    /// The full help of `zklock check --help` and its man page.
    pub(in crate::cli) fn manual() -> String {
        format!(
            "{EXAMPLES}

Exit 0 when every TOKEN's node holds its lock now by its lock's rules (the
queue rules lock and stat use; a shared hold counts for rlock, a granted
lease for sem), 1 when one does not: the node is gone, it still waits, or
--fence N is not its czxid (a node deleted and made again under the same
name has another, so an old token never passes). Each answer comes after a
sync, so it is as fresh as the leader's. A TOKEN not named as a lock
contender or lease is a usage error (2), before connecting. --fence is
given once per TOKEN, in order.

Each check opens a session, asks, and closes it (a few milliseconds on a
near ensemble). Its limit: the check and the write are two steps, and the
lock may pass on between them; only a resource that compares the fencing
token itself on each write (keeping the highest it has seen) closes that gap.

Table: NODE, HELD, FENCE, AGE, LOCK (-o wide). JSON: an array of {{\"held\",
\"lock\", \"node\", \"fence\", \"age_ms\"}}, one per TOKEN in order; fence and
age_ms are null for a node that is gone."
        )
    }
}

/// `zklock stat`.
pub(super) mod stat {
    use super::ls::LOCKS_EXPLAINED;

    /// Short examples for `zklock stat -h`.
    pub(in crate::cli) const EXAMPLES: &str = "\
Examples:
  zklock stat deploy               the lock /locks/deploy in full
  zklock stat deploy -o json       the same as JSON
  zklock stat /zookeeper           a plain node: zkCli's stat fields";

    /// The full help of `zklock stat --help` and its man page.
    pub(in crate::cli) fn manual() -> String {
        format!(
            "{EXAMPLES}\n\n\
On a lock: its kind, dialect and every contender in queue order, holders
first: NODE (relative to the lock; -o wide), SEQ, MODE, STATE (holding, or
waiting on the contender of that SEQ; \"not watching\" for a waiter whose
session sets no watch on the node it waits on), SESSION, CONNECTED (yes;
no when every member's own list is in hand and none lists the session;
unknown when they are not, as ls --help says; - for a node without a
session), CLIENT
(address via server; -o wide), AGE, FENCE (the czxid, the fencing token;
-o wide) and OWNER (zklock's user@host pid, the command as ps shows it,
with its arguments only when the holder ran with --record-command, and
--data; HBase's server, table and purpose, a leader node's decoded leader,
Curator's IP or kazoo's identifier, else the session). The default columns
are fitted to the terminal's width (80 off a terminal) as ls's are: a row
too wide cuts OWNER between words, then leaves out OWNER, AGE, MODE,
CONNECTED and STATE in that order; SEQ and SESSION stay, and the heading wraps,
its path never cut. -o json prints the
lock as ls does, and each waiter also carries blocked_by: its chain beyond
the lock's queue, a list of hops {{\"lock\", \"node\", \"session\", \"owner\",
\"age_ms\", \"via\", \"loops\"}}. Its first hop is where the owner of the lock's
longest holder waits: the holder there that has held longest, and via how
the two are one owner (session: the same ZooKeeper session; nesting: a
zklock nested in the hold; locks: one zklock holding several locks); and so
on to the root blocker, whose owner waits on nothing. loops is true on the
hop that comes back to a blocker already on the chain: a cycle (see zklock
deadlocks). Chains are followed among the locks under --root (for a lock
outside it, under its directory's parent); the table form prints the chain
below the table.

On any other node (no contender below it): zkCli's stat fields and the data.
JSON: {{\"path\", \"stat\": {{\"czxid\", \"ctime_ms\", \"mzxid\", \"mtime_ms\", \"pzxid\",
\"cversion\", \"data_version\", \"acl_version\", \"ephemeral_owner\", \"data_length\",
\"num_children\"}}, \"data\"}}; data is lossy UTF-8, or null when empty.

A node that does not exist exits 6.

{LOCKS_EXPLAINED}"
        )
    }
}

/// `zklock deadlocks`.
pub(super) mod deadlocks {
    /// Short examples for `zklock deadlocks -h`.
    pub(in crate::cli) const EXAMPLES: &str = "\
Examples:
  # every cycle among the locks under /locks
  zklock deadlocks
  # every cycle anywhere, as JSON
  zklock deadlocks / -o json
  # a check that fails on a cycle that will never clear
  zklock deadlocks --certain --min-age 1m && echo none";

    /// The full help of `zklock deadlocks --help` and its man page.
    pub(in crate::cli) fn manual() -> String {
        format!(
            "{EXAMPLES}\n\n\
A waiter waits on the contenders its lock's rules name (a writer behind
several readers on all of them; a semaphore's waiter on any lease holder).
A holder lets go only when its owner goes on, and its owner may be waiting
on another lock: two contenders have one owner when they share a ZooKeeper
session, when one zklock holds several locks, when a zklock's owner
record says it is nested in the other's hold (it proved so from its own
process ancestry), or when the other is a --detach holder and the zklock
was started by the process that started that holder or by its --while-pid
process (their identities, pid and start time on one boot, are in the owner
records). A cycle of such waits never clears by itself; for a
semaphore, only a knot does (every lease holder waits).

A cycle is certain when every edge is proven (nesting, one zklock holding
several locks, a queue's wait; not a semaphore's lease), no waiter in it gives up by itself (no
-w deadline in its owner record), and a second reading after a sync finds
its nodes unchanged; otherwise it is possible, and says why: a waiter
gives up at its -w deadline, a semaphore (any lease holder may go on), a
session whose process zklock cannot see (it may serve threads that go
on), a detached holder (its starter may run the waiter in the background,
or release later), or a node changed between the readings. Elections never
take part. Owner records count only as written when the node was created,
and are taken at their writer's word: anyone who may create nodes in the
lock directories can forge a certain cycle, which --acl on the root and the
lock directories prevents.

The heading names each cycle, whether it is certain, how long it has stood
(the age of its youngest contender) and the release that breaks it there,
quoted to paste into bash or zsh: a path that is not printable ASCII as
$'...' with byte escapes, so that it names exactly that node; below it, for
a possible cycle, why it is only possible. Each line is one wait: CYCLE,
WAITER and HOLDER (the owner as stat shows it: user@host pid N and the
program; -o wide adds WAITER SESSION and HOLDER SESSION), VIA (how the
holder's owner waits on: session, nesting, locks or detached) and LOCK.
With no cycle, stderr says so (no wait-for cycles under /locks).

JSON: an array of {{\"certain\", \"doubts\", \"since_ms\", \"edges\": [{{\"lock\",
\"waiter\": {{\"node\", \"session\", \"owner\", \"command\"}}, \"holder\": {{...}},
\"via\"}}], \"break_with\"}}; doubts lists why a possible cycle is only
possible (deadline, semaphore, session, detached, changed), empty for a
certain one.
When one lock gives a cycle more than 16 waits (a full semaphore's waiters
each on any lease holder, a writer behind many readers), they are one
entry {{\"lock\", \"via\", \"waiters\": {{\"count\", \"sample\"}}, \"holders\":
{{\"count\", \"sample\"}}}} instead: via is semaphore (each waiter goes on
once any holder does) or queue, each sample holds the first three in queue
order, and each sampled holder its own via. In the table, such a row shows
the first owner and session of each side and how many more (+1999).

Exit 0 when no cycle is found, 1 when one is (with --certain: a certain
one), as grep does. See docs/WAIT-CHAINS.md."
        )
    }
}

/// `zklock history`.
pub(super) mod history {
    /// Short examples for `zklock history -h`.
    pub(in crate::cli) const EXAMPLES: &str = "\
Examples:
  # every hold of /locks/deploy, from a server's data directory
  zklock history deploy --data-dir /var/lib/zookeeper
  # every lock anywhere, over the last two hours, as JSON
  zklock history / --data-dir /var/lib/zookeeper --since 2h -o json
  # every lock since 03:00 UTC, from a copied log file
  zklock history / --log log.1a2b --since 2026-11-27T03:00:00Z
  # did two sessions ever hold a lock at once?
  zklock history / --data-dir /var/lib/zookeeper --overlaps";

    /// The full help of `zklock history --help` and its man page.
    pub(in crate::cli) fn manual() -> String {
        format!(
            "{EXAMPLES}\n\n\
Reads a ZooKeeper server's transaction logs offline (no connection is made)
and replays them through the queue rules lock and stat use: every
contender of every lock below PATH (zklock's, Curator's, kazoo's and the
other dialects ls knows; mutexes and read-write locks), from the
transaction that created it to the one that ended it. Logs written by
ZooKeeper 3.5 to 3.9 are read, with their multi transactions, container
and TTL nodes, 3.6's digests and the zeros the server preallocates. Times
are the leader's clock as the log stamps them.

Each row is one contender: LOCK, SEQ, SESSION (its owner session),
HOLDING FROM (when the rules let it hold, as the contenders ahead of it
went; - if it never held), HELD, HOW it ended and OWNER (zklock's owner
record, or the data Curator or kazoo wrote). -o wide adds NODE, DIALECT,
MODE, FENCE (the zxid that created it), CREATED, ENDED and WAITED. HOW is
one of: released by its own session; gave up (never held); released at its
--max-hold; lost (zklock's holder lost the lock, stopped its command and
let go, as its end record says); session closed by the client; closed by
the server (expired):
the server closes an expired session itself, with request number 0;
broken: deleted by another session, named, with who broke it and why when
zklock release or reap wrote an end record into the lock directory in the
same transaction; reaped; removed by the server (its TTL ran out). A
contender still alive where the logs end is shown so. A table of each
lock follows: holds, unclean ends (any end but a release), and the 50th
and 99th percentile and the longest hold and wait.

A semaphore's leases (Curator's InterProcessSemaphoreV2, kazoo's
Semaphore, zklock sem in either layout) are holds of the semaphore, MODE
lease. A lease's wait counts from when its client queued on the
semaphore's internal lock (PATH/locks for Curator, PATH-__lock__ for
kazoo, shown as a lock of its own); it holds from when its client let that
lock go with its lease in place (Curator), or from its creation (kazoo,
which makes a lease only once there is room). Leases held together are no
overlap; more at once than the maximum kazoo keeps in the semaphore's data
are (Curator keeps its maximum in no node). A semaphore's path takes in
kazoo's internal lock beside it. The locks one zklock took together (lock
A B) share one \"set\" in JSON: their session, and the pid and time of
their owner record; null for other libraries' nodes, which name no set.

--since and --until keep the contenders alive at some moment between them
(a UTC time, or a duration before now); the reading stops at --until.
Two libraries sharing one directory follow different rules: kazoo skips
Curator's lock- nodes, Curator sorts kazoo's after its own, so each may
hold at once. A contender holds by its own library's rules (a node of
zklock's, which orders every dialect together, only when nothing of any
dialect is ahead of it). --overlaps shows, instead of the holds, every span
in which two sessions held one lock at once, one of them exclusively: LOCK,
FROM (the transaction that began it), UNTIL (the one that changed its
holders), LASTED and HOLDERS (node, dialect, mode, session and fence of
each, the first 16 and the first 16 exclusive ones, with how many more
held); -o wide adds the ZXID that began it. JSON: {{\"overlaps\": [{{\"lock\",
\"from_ms\", \"from_zxid\", \"until_ms\", \"until_zxid\", \"holders\": [{{\"node\",
\"dialect\", \"mode\", \"session\", \"fence\"}}], \"holder_count\"}}]}}, until null
while it lasted where the logs end. A frozen holder's own work outliving its hold is not in
the log and cannot show here.

With --data-dir the replay starts from a snapshot (snapshot.ZXID, also
.gz and .snappy as ZooKeeper 3.6 and later write them when
zookeeper.snapshot.compression.method says so), as the server restores
itself: the newest taken at or before --since, or without --since the
oldest the logs go on from without a gap (snapshot.0 before
log.100000001 is one); then the logs from the one that holds the
transaction after it. A member brought up to date by its leader's
snapshot (down long, or its log cut back) lacks in its own logs what it
applied from it: its history starts at the newest such snapshot and says
so on stderr; read another member for what came before. A contender alive in the snapshot is known from there,
its session, data and fence as the snapshot keeps them (a persistent
node's creating session is not kept and shows as 0x0), holding from its
creation when the rules let it hold then. The server writes a snapshot as
it goes on (it is fuzzy), so the transactions just after it may already be
in it: a create of a node it has, a delete of one it lacks, are taken as
applied. The snapshot's tree is read one node at a time. A snapshot cut off,
corrupt or failing its checksum stops the reading before anything is shown,
and the error names the file and the offset in its (uncompressed) contents
(exit 10, cause damaged_snapshot). --log FILE reads no snapshot.

JSON: {{\"holds\": [{{\"lock\", \"node\", \"dialect\", \"mode\", \"session\",
\"fence\", \"owner\", \"data\", \"created_ms\", \"holding_ms\", \"ended_ms\",
\"ended_zxid\", \"how\", \"ended_by\", \"breaker\", \"reason\", \"waited_ms\", \"held_ms\"}}],
\"locks\": [{{\"lock\", \"contenders\", \"holds\", \"unclean\", \"hold_ms\":
{{\"p50\", \"p99\", \"max\"}}, \"wait_ms\": {{...}}}}]}}, how one of released,
gave_up, max_hold, lost (deleted by its own zklock after the lock was
lost, its command stopped, as its end record says), closed_by_client,
expired, broken, reaped, ttl_expired, or null while alive; data the node's data as text, cut at 1
KiB, where it is no owner record, null where owner has the record; a
duration the log's times cannot give (too far apart to count) null.

Memory grows with the contenders alive at one time, each kept small (a
name or lock path over 4 KiB shortened around its length and a digest),
and time with the length of the logs, whatever they hold.

A record cut off part-way or failing its checksum stops the reading: what
was read before it is shown, then the error names the file and the
record's offset (exit 10, cause damaged_log). See the post-mortem
walk-through in docs/GUIDE.md."
        )
    }
}

/// `zklock dump`.
pub(super) mod dump {
    use super::ls::LOCKS_EXPLAINED;

    /// Short examples for `zklock dump -h`.
    pub(in crate::cli) const EXAMPLES: &str = "\
Examples:
  # every lock under /locks, for a bug report
  zklock dump > locks.json
  # what each session holds or waits for
  zklock dump app --sessions
  # one row per contender
  zklock dump -o table";

    /// The full help of `zklock dump --help` and its man page.
    pub(in crate::cli) fn manual() -> String {
        format!(
            "{EXAMPLES}\n\n\
dump prints JSON unless -o table is given. The document:
  {{\"path\", \"time_ms\" (when the dump began), \"locks\": [lock]}}
where each lock is as ls prints it and each contender also carries \"stat\":
every zkCli stat field, as stat prints them for a plain node. The locks are
written out as they are read, in path order, so a dump of any size never
sits in memory whole. With --sessions:
  {{\"path\", \"time_ms\", \"sessions\": [{{\"session\", \"holding\": [entry],
  \"waiting\": [entry]}}]}}, entry = {{\"lock\", \"kind\", \"dialect\", \"contender\"}}
sessions in numeric order (0x0 gathers persistent nodes), entries in lock
path order. -o table prints one row per contender (sorted by session with
--sessions).

{LOCKS_EXPLAINED}"
        )
    }
}

/// `zklock watch`.
pub(super) mod watch {
    /// Short examples for `zklock watch -h`.
    pub(in crate::cli) const EXAMPLES: &str = "\
Examples:
  # follow /locks/deploy until Ctrl-C
  zklock watch deploy
  # every lock under /locks, as JSON Lines
  zklock watch /locks -o json
  # wait until nobody holds /locks/maint
  zklock watch --until free maint
  # wait at most 30s for someone to take /locks/jobs
  zklock watch --until held -w 30s jobs
  # stop after the next change
  zklock watch --count 1 deploy";

    /// The full help of `zklock watch --help` and its man page.
    pub(in crate::cli) fn manual() -> String {
        format!(
            "{EXAMPLES}

watch prints the current state first, one line per contender (holding,
queued) and a line `watching` that ends it, then one line per change as it
happens:
  waiting   a contender arrived and waits (on the node ahead of it)
  acquired  a contender holds that did not: the new holder, its fencing
            token (the node's czxid) and its owner
  released  a holder's node is gone
  left      a waiter's node is gone before it held
  gone      the lock directory was deleted
  gap       the connection to ZooKeeper was lost, or the session
            expired and a new one was made: changes in between may be
            missing, so everything was read again; the transitions
            follow this line
Each line starts with the time watch saw it (UTC). PATH may hold many locks:
every lock at or below it is followed, and PATH need not exist yet.

Every event comes from reading the lock again as stat does, each time
ZooKeeper says a node under PATH changed (one persistent recursive watch,
ZooKeeper 3.6+; on older servers one-shot watches on every directory, set
before each reading). A contender that comes and goes between two readings
may not be seen; the order of what is seen is kept. A handoff is `released`
then `acquired`.

--until free: exit 0 once no lock under PATH has a holder (at once if none
has); a script can wait for a maintenance lock this way without taking it.
--until held: exit 0 once some lock under PATH has a holder. Both judge the
state as read, not the intermediate counts of an event line. --count N:
exit 0 after N changes (the state at the start and gap lines do not count).
--timeout DUR: exit 1 when it runs out first. A signal ends it with 128+n.
If the session expires, watch makes a new one (a gap line says so); exit 3
when ZooKeeper cannot be reached for a new one.

How long and how: an acquired line says how long the contender waited, a
released line how long it held (when watch saw the wait or the hold begin,
on its own clock), and how the hold ended, as far as a client can tell
(ZooKeeper does not say who deleted a node), with the evidence:
  deleted_while_session_alive
            released by its owner or broken by another: its session
            has other nodes here, or a member lists it connected
  session_ended
            closed or expired: every member answered, none lists it
  revoked   __REVOKE__ was written into the node before it went
  released, gave_up, max_hold, broken, reaped, lost
            what the end record a zklock wrote into the lock directory,
            in the transaction that deleted the node, says; the line
            names who ended it and why (release --reason, reap --reason)
  unknown   a persistent node, or a member could not be asked
            within 0.5 s
Members are asked (cons, as ls does) at most once a second.

JSON Lines (-o json), one object per event:
  {{\"time\", \"time_ms\", \"event\", \"lock\", \"node\", \"mode\", \"session\",
  \"fence\", \"owner_text\", \"waiting_on\", \"holders\", \"waiters\",
  \"held_ms\", \"waited_ms\", \"how\", \"how_evidence\", \"ended_by\"}}
  (and \"lock_delay_ms\" on lock_delay)
  time        when watch saw it, RFC 3339 UTC with milliseconds;
              time_ms the same in milliseconds since the epoch
  event       holding, queued, watching, waiting, acquired, released,
              left, lock_delay (after acquired: the new holder keeps a
              --lock-delay, given in lock_delay_ms, and the hold before
              ended uncleanly), gone or gap
  lock        the lock directory; for watching and gap the watched PATH
  node        the contender's node (full path); null for watching,
              gone, gap
  mode        exclusive, shared or lease; null without a node
  session     the contender's session, 0x...; null without a node
  fence       the contender's fencing token (czxid); null without a
              node
  owner_text  who the contender is, as text (as stat's OWNER column
              shows it: zklock's user@host pid, Curator's IP, kazoo's
              identifier, or the session); null without a node. (Named
              apart from the owner object of ls/stat/dump, zklock's
              parsed record.)
  waiting_on  the node a waiter waits on; null for holders
  holders     how many hold the lock after this event (watching, gap:
              in every lock under PATH)
  waiters     how many wait, counted the same way
  held_ms     on released, how long it held; null when unseen
  waited_ms   on acquired, how long it waited; null when unseen
  how         on released: deleted_while_session_alive, session_ended,
              revoked or unknown; null otherwise
  how_evidence  what how rests on: end_record, revoke_written,
              session_has_other_nodes, session_connected,
              session_listed_nowhere, members_silent or no_session
  ended_by    with an end record: {{\"user\", \"host\", \"pid\", \"reason\"}}
              of the zklock that ended the hold; else null"
        )
    }
}

/// `zklock top`.
pub(super) mod top {
    /// Short examples for `zklock top -h`.
    pub(in crate::cli) const EXAMPLES: &str = "\
Examples:
  # every lock under /locks, most contended first
  zklock top
  # the locks under /locks/app
  zklock top app
  # only watch: no release, revoke or reap from the view
  zklock top --read-only";

    /// The full help of `zklock top --help` and its man page.
    pub(in crate::cli) fn manual() -> String {
        format!(
            "{EXAMPLES}

top shows the locks under PATH full screen, kept current from the live
watch (as watch follows them): LOCK, HOLD and WAIT (how many), HELD (the
oldest holding node's age), CONNECTED, WAITED (the oldest waiting node's
age), OWNER and HOST (of the oldest holder; every member, as ls asks
them, is asked who is connected every 10 s). CONNECTED is yes, no (every
member's own list is in hand and none lists the session), with how long it
has been so
across top's surveys once two have shown it (no 30s: a frozen or cut off
client, which may still come back until its session expires), unknown when
the lists are not whole (as ls --help says), or - for a node without a
session; HOST is the
host its client connects from, disconnected when its session has no
connection. OWNER shows the command as ps does.
The columns fit the screen's width: a row too wide cuts OWNER between
words, then leaves out HOST, WAITED, OWNER, HELD and CONNECTED in that
order; LOCK and
the counts stay, and a lock path wider than the screen wraps onto the next
line, each line it goes on from ending in \u{21b5} (U+21B5). No path,
sequence number, session id or pid is ever cut.
Keys: s sorts by contention (most waiters first) or by hold age; / filters
by name (Enter ends the filter, Esc clears it); Up/Down or j/k choose a
lock and Enter opens it (its wait chain as stat shows it, when its holder's
owner waits on another lock under PATH: each hop, via what, on whom, to the
root blocker or back round a cycle; then its queue as stat shows it, each
contender named by its sequence number: SEQ, MODE, STATE, SESSION,
CONNECTED, AGE and OWNER; Up/Down choose a contender there, Esc goes back); q or Ctrl-C
quits.
Actions, on the lock chosen in the list or on the contender chosen in an
opened lock: r releases (breaks) it, deleting its holders, or the
contender chosen, with the end record broken, as release --holders does;
v revokes, writing __REVOKE__ into its holders (or the holder chosen) for
them to let go, as release --revoke does (only Curator and zklock holders
obey it; others are left alone and said so); x reaps, deleting its
contenders that every member says are not connected, or the contender
chosen, with the end record reaped, as reap does. Each opens a
confirmation under the table first: what will be done, to which nodes
(each path whole, its state, session, age, whether its session is
connected as the last survey found it, owner), a warning for each
connected session it would delete. y does it; Esc or n cancels, and every
other key does nothing; Tab types a reason for the end record (Enter ends
it). Only the nodes shown when the confirmation opened are touched, each
only if it is still that node at that version (czxid, session, version):
one changed, gone or made again under the same name meanwhile is left
alone. What became of each node is shown under the table until the next
key. With the global --read-only (inspection only, a read-only server
allowed) top offers no action and refuses these keys: for watching a
cluster one must not touch. Usable at 80x24;
NO_COLOR turns colour off. The terminal is restored however top ends: q,
Ctrl-C, SIGTERM, a lost connection. On a non-terminal top exits 2: use ls
or watch there."
        )
    }
}

/// `zklock exporter`.
pub(super) mod exporter {
    /// Short examples for `zklock exporter -h`.
    pub(in crate::cli) const EXAMPLES: &str = "\
Examples:
  # the locks under /locks, at http://127.0.0.1:9731/metrics
  zklock exporter
  # the locks under /locks/app, on every interface
  zklock exporter app --listen 0.0.0.0:9731
  # the same gauges once, into node_exporter's textfile directory
  zklock -o prometheus ls --output-file \"$TEXTFILE_DIR/zklock.prom\"";

    /// The full help of `zklock exporter --help` and its man page.
    pub(in crate::cli) fn manual() -> String {
        format!(
            "{EXAMPLES}

exporter follows the locks under PATH live (as watch does) and serves their
metrics over HTTP: /metrics in OpenMetrics when the scraper asks for it in
Accept (Prometheus does), else the Prometheus text format; / says what it
is. Scrapes are answered from figures rendered once a second, never by
reading ZooKeeper, so a scrape costs the same however large the tree.

Series: the gauges of ls -o prometheus (zklock_lock_holders, _waiters,
_holder_age_seconds, _oldest_wait_seconds, _disconnected_holders, labels
lock, kind, dialect; and zklock_deadlock_cycles, label certain: \"false\"
for a cycle that is only possible, because of a -w deadline, a semaphore,
a session whose process zklock cannot see or a detached holder),
zklock_lock_held_seconds (since the exporter saw the
hold begin), the counters zklock_acquisitions_total and
zklock_hold_ends_total{{how}} (how as watch tells it), the histograms
zklock_hold_duration_seconds and zklock_wait_duration_seconds (1 ms to a
day), and zklock_exporter_connected, zklock_exporter_last_update_seconds
(when the figures were last known current) and
zklock_exporter_locks_aggregated. A figure it cannot know is absent, never
0: disconnected holders until the first session survey, and whenever the
members' lists are not whole (as ls --help says); deadlock cycles until
the first cycle search.

--max-locks N (default 500): at most N locks get series of their own, the
most contended first; a lock keeps its series while it exists, and the rest
are added up under lock=\"(other)\". --survey-interval DUR (default 30s):
how often every member is asked who is connected (cons, or its AdminServer
on its --admin-port), and how often the locks are read whole and searched for
wait-for cycles as deadlocks does (on a session of its own; a search that
fails leaves the last count served).

Whoever reaches the port cannot starve it: a connection has 5 s to send a
request's headers (from when it was accepted or last answered, so an idle
keep-alive connection is closed after 5 s); headers are at most 8 KiB; at
most 256 connections are served at once and 16 from one address (an IPv6
/64 counts as one), and at a cap the oldest connection that has not sent a whole request is closed for
the new one. 64 descriptors below ulimit -n are kept for its ZooKeeper
sessions (the cap is the limit less 64 when that is lower).

The exporter never writes to ZooKeeper and connects read-only where the
server allows, so several can run side by side and the last known figures
are served through a quorum loss (zklock_exporter_connected 0). A lost
connection or an expired session is recovered by reading everything again;
a watch that fails is started again with backoff. SIGTERM or SIGINT stops
it: the session is closed and it exits 0. Failing to listen on ADDR exits
10. docs/MONITORING.md has the metrics reference, a scrape config and alert
rules."
        )
    }
}

/// `zklock verify`.
pub(super) mod verify {
    /// Short examples for `zklock verify -h`.
    pub(in crate::cli) const EXAMPLES: &str = "\
Examples:
  # two minutes of every fault, with your scripts' session timeout
  zklock verify --session-timeout 10s
  # readers and writers, 10 contenders, connection cuts only
  zklock verify --mode rw --contenders 10 --faults cut --duration 5m
  # the verdict for a script
  zklock verify -o json > verdict.json";

    /// The full help of `zklock verify --help` and its man page.
    pub(in crate::cli) fn manual() -> String {
        format!(
            "{EXAMPLES}

verify tests the lock on your own ensemble, with your session timeout, your
network and this host, and says how much margin your settings leave. It
starts --contenders real zklock holders (this binary: `zklock lock`, or
rlock and wlock mixed with --mode rw), which take the lock in loops and run
a critical section under it, through the guard, the process group and the
self-fencing every command goes through. Each section logs when it starts,
every 20 ms while it runs, and when it ends, with its fence (ZKLOCK_FENCE);
half of them ignore SIGTERM, so that only the SIGKILL after --kill-after
stops them; the first fault of each class hits such a section, the next
one that does not. Some waiters give up with -w. The run is a sequence of
rounds,
each in a fresh lock directory (so a fence that were only a sequence number
would repeat), and in each round one fault hits one holder at a random
moment:

  cut    the holder's connection held by verify's proxy, in both
         directions, without a reset, past its session timeout: a
         partition as the client sees it;
  pause  the holder's zklock, guard and section stopped (SIGSTOP)
         past its session timeout, then continued;
  kill   zklock, its guard, or both killed with SIGKILL (in turn).

Then it checks: no two sections that exclude each other overlapped (but a
paused holder's with a later one of a greater fence: no client can stop a
process that is not running; a fencing resource refuses it, and verify
counts such overlaps as allowed); fences grew in grant order; after every
cut and kill the holder's command stopped before the server could expire
the session (its last bytes through the proxy plus the session timeout)
and before the next holder began, both margins positive; every holder
exited as documented for what happened to it (4 after a cut or a pause, 10
after its guard was killed, killed by SIGKILL with zklock, 1 when it gave
up, 0 when its section ended on verify's word; 3 or 4 with no fault, a
stall of the host, network or ensemble, is counted and advised on, not a
violation); nothing was left behind. It prints the margins (smallest and
median), the session timeout the server granted and the --kill-after
grace, with advice where a margin is thin (under 250 ms: which flag, and to
what).

verify touches nothing but its own. PATH (--path, a name under --root, or
by default zklock-verify-<random> under it) must not exist: verify creates
it, works below it and removes it, and a PATH that exists is refused (exit
2). Should a node it did not make appear below it, the run stops at once
and leaves that node alone. Its holders reach the ensemble through its
proxy, which listens on 127.0.0.1 and relays a connection only when its
socket belongs to one of the run's live holders (found in /proc), closing
any other unread. It signals only the processes it started (it is their
subreaper) and only through pidfds, never by a pid that could have been
reused. The holders get the credentials over a pipe, as a --detach holder
does, never in their argv or environment. It needs no root and never
touches a server: no server is stopped, no firewall rule made. Over TLS it
cannot run (its proxy must read the connections); with --sasl gssapi, give
--sasl-host. Each contender is a session from this host, counted against
each server's maxClientCnxns: at most 20.

Whatever ends the run (its time, Ctrl-C, a stranger's node, the loss of
its own session), it continues every process it stopped, heals every cut,
ends every holder, and removes what it made (waiting up to a session timeout
for the nodes of killed holders to expire). A run that was cut short, or in
which a fault asked for could not be injected, never exits 0: exit 1, or
after a signal, once all is put back, death by SIGINT or SIGQUIT (so that a
shell stops its script) and 128+n after SIGTERM or SIGHUP. Each
fault takes a round of about two session timeouts: a --duration too short
for one round per fault is refused (exit 2). If verify itself is killed
with SIGKILL, its holders die with it (their nodes go with their sessions),
but PATH and its empty directories stay: remove them by hand (zkCli.sh
deleteall PATH).

A passing run shows that on this ensemble, with these settings and this
host's load, the faults verify injected did not break the lock; it does not
prove that none can, nor cover what it does not inject (a host frozen for
longer, a clock that jumps, a server that loses its data).

Table: a heading, then one row per fault class: FAULT, INJECTED, OUTCOME,
TO EXPIRY and TO NEXT GRANT (the margins, smallest / median), then each
violation with its two sections (run, mode in rw, fence, pid, from and
to), the paused holders that ran on, and advice. JSON: {{\"passed\", \"path\", \"mode\",
\"contenders\", \"duration_ms\", \"ran_ms\", \"session_timeout_ms\",
\"kill_after_ms\", \"rounds\", \"sections\", \"give_ups\", \"unreachable\", \"lost_without_fault\",
\"refused_connections\", \"cut_short\" (why, or null), \"faults\": [{{\"class\",
\"requested\", \"injected\", \"stopped_in_time\", \"overlaps_allowed\",
\"margin_to_expiry_ms\", \"margin_to_next_grant_ms\" ({{\"min\", \"median\"}} or
null)}}], \"injected\": [{{\"class\", \"target\" (zklock, guard, both or null),
\"run\", \"contender\", \"fence\", \"at_ms\", \"resumed_ms\", \"stopped_ms\",
\"margin_to_expiry_ms\", \"margin_to_next_grant_ms\", \"exit\"}}],
\"allowed_overlaps\": [[section, section]], \"violations\": [{{\"kind\"
(overlap, fence_order, late_stop, exit_code, stuck, not_injected, node_left,
process_left), \"message\", \"sections\": [section]}}], \"advice\": [text]}}; a
section is {{\"run\", \"contender\", \"mode\" (exclusive, read, write),
\"fence\", \"pid\", \"start_ms\", \"stop_ms\", \"stopped\" (told, signal, killed,
running)}}. Times (_ms) are milliseconds since the epoch; margins,
milliseconds. With -v and ZKLOCK_LOG_FORMAT=json, these moments carry an
event field: round (round, dir), fault (class, kills, run) and
proxy_listening (address, one per member)."
        )
    }
}

/// `zklock reap`.
pub(super) mod reap {
    /// Short examples for `zklock reap -h`.
    pub(in crate::cli) const EXAMPLES: &str = "\
Examples:
  # what would go: contenders older than an hour
  zklock reap --older-than 1h --dry-run
  # delete them (asks on a terminal)
  zklock reap --older-than 1h
  # every node of that session under /locks/app
  zklock reap --session 0x1000a2b3c4d0005 --yes app
  # holds over an hour old whose sessions no member has listed for 5m
  zklock reap --disconnected-for 5m --older-than 1h --dry-run
  # everything under /locks/old-app, directories too
  zklock reap --all --empty --yes old-app";

    /// The full help of `zklock reap --help` and its man page.
    pub(in crate::cli) fn manual() -> String {
        format!(
            "{EXAMPLES}

Selectors (a node must match every one given): --older-than DUR (the
node's ctime is at least DUR ago, by this machine's clock), --session ID
(its owner session, 0x... as zklock and zkCli print it, or decimal),
--disconnected-for DUR (see below), --all (every contender). At least one,
or --empty alone; otherwise exit 2. So --disconnected-for 5m --older-than
1h takes the holds over an hour old whose sessions have been gone 5
minutes, and --disconnected-for with --session only that session's nodes,
once it has been gone that long.

--disconnected-for DUR chooses the contenders whose session every member
(as ls asks them, and as its --help says when their lists count) has left
unlisted for at least DUR: reap asks every member at once, then again
every quarter of DUR (between 0.5 s and 10 s) until DUR has passed, two
surveys at least, and keeps a session only while every survey has every
member's own list, covering the ensemble, without it. A survey that cannot
tell ends its run: unknown is never taken for gone, and a contender whose
session a survey could not tell about is left alone and reported (exit
10; --dry-run lists it under skipped). It never chooses a node without a
session (persistent, TTL): --older-than serves those. Just before the
delete (after the prompt), every member is asked once more, and a
contender whose session is listed again, or unknown, is left alone and
reported (its directory with it). It finds a holder whose connection is
gone while the server keeps its session: a killed client, or one cut off
by a network that reset its connection, under a long session timeout. A
frozen holder (SIGSTOP, a paused VM) keeps its connection open, and its
member lists it until the session expires and takes the node with it: it
shows connected all along, and --disconnected-for cannot find it. A
session no member lists is not dead either: a cut off client comes back as
long as the server has not expired the session, and a Curator or kazoo
holder whose session comes back does not notice that its node is gone and
goes on as if it held the lock. The prompt says so: breaking such a hold is
a decision, not a cleanup.

Only lock contender nodes are ever deleted: the holders and waiters ls and
stat show, of every dialect (semaphore leases and their acquirers too). A
node is a contender when its name is one a lock library makes and its node
is one that library makes: ephemeral (owned by a session); persistent only
for kazoo's <hex32>__lock__N names and zklock's own --ttl nodes (known by
zklock's owner record). A persistent lock-0000000001, write-N, read-N or
x-<digits>-N is some application's data and is never touched, nor is any
other child of a lock directory (broker ids, queue entries). Elections and
leader nodes (LeaderLatch, Solr, n_N candidates; Kafka's controller, Hadoop
HA's lock, Helix's and HBase's leaders), which ls shows, are never deleted:
that would depose a service's leader. Per lock, waiters go first, from the
back of the queue, then holders, so no waiter is granted a lock only to
lose it.

Each contender's delete writes, in the same transaction, an end record into
its lock directory's data (how: reaped; by: user@host and pid; --reason
TEXT), which watch and the exporter read; not into a directory this reap
deletes, a kazoo semaphore's node, or a directory whose ACL refuses it.

--empty also deletes the lock directories this reap empties: a lock
directory at or below PATH whose every contender this reap deletes, with no
other child and no data but an end record, after its contenders. An empty node found empty is
never deleted: nothing shows what it held (Kafka's broker list, an emptied
queue), and the server shows containers to clients as persistent nodes.
zklock's and Curator's lock directories are containers and go by themselves
once empty. Never /, /zookeeper, --root or anything above it; never a
semaphore's directory.

Every node is deleted only if it is still the node that was listed (and
shown at the prompt): just before its delete, its stat is read again
(batched) and its czxid and owner session must match, and the delete
carries the data version it was read at. A node that changed, or was
deleted and made again under the same name, is left alone and reported.
What remains is one round trip between that read and the delete. The
deletes go on one session in multi requests of 128 (one transaction on the
server each), 8 requests in flight; when one delete of a multi fails, that
node is reported and the others are deleted one by one. --dry-run only
lists. Otherwise, with stdin a terminal zklock lists what will go and asks;
without a terminal it needs --yes, and exits 2 without deleting anything.

A reap that stops on an error (a lost session, a delete refused) prints
what it deleted before the error, then the error and its exit code.
Deleting a node needs DELETE permission on its parent: a refused delete
names the parent whose ACL refused it (exit 5).

A live holder whose node is reaped has lost its lock: a zklock holder stops
its command and exits 4; other libraries' holders may not notice at all.
That is the price of reaping: reap what is stale, not what is slow.

Exit: 0 when every node selected is gone (including nodes someone else
removed meanwhile); 10 when some were left alone; 2 when not confirmed; 5
when a delete was refused. JSON: {{\"deleted\": [path], \"skipped\":
[{{\"path\", \"reason\"}}]}}; with --dry-run {{\"would_delete\": [node],
\"deleted\": [], \"skipped\": []}}, where node = {{\"path\", \"what\" (holder,
waiter, empty-directory), \"lock\", \"session\" (0x..., null for a
directory), \"age_ms\", \"owner\" (as stat shows it; null for a
directory), \"connection\" (connected, disconnected or unknown, as ls
says; null for a directory or a node without a session), \"absent_ms\"
(how long every member has left the session unlisted across reap's
surveys; null unless two surveys have), \"end_record\" (whether the end
record would go into its lock directory: false where the directory holds
an application's data, never written over, or is deleted by this reap;
null for a directory)}}. The table shows CONNECTED (yes, no with how long
once known, unknown, -), as does the prompt, and RECORD (yes, no, -); the
prompt says which directories get a record and which keep their data."
        )
    }
}

#[cfg(test)]
mod tests {
    use super::unbroken;

    #[test]
    fn prose_is_joined_and_indented_lines_stay() {
        let text = "Examples:\n  zklock ls\n  # a comment\n\nOne paragraph\nbroken here.\n  a: list\n     goes on\nMore\nprose.";
        assert_eq!(
            unbroken(text),
            "Examples:\n  zklock ls\n  # a comment\n\nOne paragraph broken here.\n  a: list\n     goes on\nMore prose."
        );
    }
}
