//! The owner record zklock writes into its contender nodes: who
//! holds or waits, from where, running what.

use crate::procfs;
use serde::{Deserialize, Serialize};

/// The JSON object in a zklock node's data.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    /// Always `zklock`; tells zklock's nodes from others'.
    pub tool: String,
    pub version: String,
    pub host: String,
    pub pid: u32,
    pub user: String,
    /// The command run under the lock, if any: its program name, or its
    /// whole command line when asked (arguments may hold secrets, and the
    /// record is as readable as the node).
    pub command: Option<Vec<String>>,
    /// When the contender was created, RFC 3339 UTC.
    pub time: String,
    /// `--data TEXT`, if given.
    pub data: Option<String>,
    /// What identifies the command on its host, so that a zklock started
    /// under it can prove from its own ancestry that it is nested there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<Identity>,
    /// When a `-w` wait gives up by itself, in milliseconds since the
    /// epoch: a waiter with a deadline never makes a cycle certain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<i64>,
    /// The enclosing holds (node paths) this zklock proved from its
    /// ancestry to be nested in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nested_in: Vec<String>,
    /// True when this zklock looks for a certain wait-for cycle through
    /// its own wait while it waits: of such waiters on one cycle, the
    /// youngest gives up. An older zklock's record has no such mark.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub checks_cycles: bool,
    /// This process and its ancestors: whoever waits while this zklock
    /// waits. A detached holder's starter is among them when it started
    /// this zklock, which then waits as that holder's owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lineage: Option<Lineage>,
    /// For a detached holder: who started it and what ends it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detached: Option<Detachment>,
    /// `--lock-delay`, in milliseconds: after a hold that ended uncleanly,
    /// this contender waits this long from that end before its command
    /// runs, holding the lock meanwhile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock_delay_ms: Option<u64>,
}

/// What identifies a command on its host: a process group whose leader
/// started at a given time, in a pid namespace, since a boot. Pids are
/// reused and hosts are renamed; all of these together are not.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// `/proc/sys/kernel/random/boot_id`.
    pub boot_id: String,
    /// The pid namespace, as `/proc/self/ns/pid` names it.
    pub pid_ns: String,
    /// The command's process group: the pid of its leader.
    pub group: i32,
    /// When the group's leader started, in clock ticks since boot (the
    /// 22nd field of `/proc/PID/stat`).
    pub group_start: u64,
}

impl Identity {
    /// The identity of the process group led by `leader`, on this host;
    /// `None` when `/proc` does not say (not Linux, or the leader is gone).
    pub fn of_group(leader: i32) -> Option<Identity> {
        let (boot_id, pid_ns) = boot_and_pid_namespace()?;
        Some(Identity {
            boot_id,
            pid_ns,
            group: leader,
            group_start: process_start(leader)?,
        })
    }

    /// True when `process`, on this host, is the leader this identity names.
    pub fn is(&self, process: i32) -> bool {
        Identity::of_group(process).is_some_and(|here| here == *self)
    }
}

/// When process `pid` started, in clock ticks since boot.
fn process_start(pid: i32) -> Option<u64> {
    procfs::process_stat(pid, 22)
}

/// This host's boot and this process's pid namespace, in which a pid and
/// its start time name one process.
fn boot_and_pid_namespace() -> Option<(String, String)> {
    let boot_id = procfs::read("/proc/sys/kernel/random/boot_id")?;
    let pid_ns = std::fs::read_link("/proc/self/ns/pid").ok()?;
    Some((
        String::from_utf8_lossy(&boot_id).trim().to_owned(),
        pid_ns.to_string_lossy().into_owned(),
    ))
}

/// A process: its pid, and when it started (a pid alone is reused).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Process {
    pub pid: i32,
    /// In clock ticks since boot (the 22nd field of `/proc/PID/stat`).
    pub start: u64,
}

impl Process {
    /// Process `pid` on this host, while it runs.
    fn of(pid: i32) -> Option<Process> {
        Some(Process {
            pid,
            start: process_start(pid)?,
        })
    }
}

/// This process and its ancestors, on one host since its boot, in one pid
/// namespace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lineage {
    pub boot_id: String,
    pub pid_ns: String,
    /// This process first, then its parent, and so on up to (not
    /// including) init.
    pub processes: Vec<Process>,
}

impl Lineage {
    /// At most this many processes count: deeper trees are nothing anyone
    /// waits through on purpose, and a record from anyone stays small.
    pub const MAX_PROCESSES: usize = 64;

    /// The lineage of this process; `None` when `/proc` does not say.
    fn of_this_process() -> Option<Lineage> {
        let (boot_id, pid_ns) = boot_and_pid_namespace()?;
        let parent = |&pid: &i32| procfs::process_stat(pid, 4)?.try_into().ok();
        let processes = std::iter::successors(Some(std::process::id() as i32), parent)
            .take_while(|&pid| pid > 1)
            .take(Lineage::MAX_PROCESSES)
            .map_while(Process::of)
            .collect();
        Some(Lineage {
            boot_id,
            pid_ns,
            processes,
        })
    }
}

/// What a detached holder's record says of it: the process that started it
/// (the parent of `zklock lock --detach`, a shell) and, with `--while-pid`,
/// the process it lives for. They stand for the holder in the wait-for
/// graph, and never tie its life: `--detach` serves across CI steps, each
/// its own shell. The processes are on the host, boot and pid namespace of
/// the record's lineage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Detachment {
    pub started_by: Option<Process>,
    pub while_pid: Option<Process>,
    /// `--lease`, counted from the grant, in milliseconds.
    pub lease_ms: Option<u64>,
}

impl Detachment {
    /// The record of this detached holder, started (over the foreground
    /// zklock, its parent while it takes the lock) by its grandparent,
    /// living for `while_pid` and for at most `lease`.
    pub fn of_this_holder(
        lease: Option<std::time::Duration>,
        while_pid: Option<i32>,
    ) -> Detachment {
        let foreground = crate::sys::parent_pid();
        let started_by = procfs::process_stat(foreground, 4)
            .and_then(|pid| pid.try_into().ok())
            .and_then(Process::of);
        Detachment {
            started_by,
            while_pid: while_pid.and_then(Process::of),
            lease_ms: lease.map(|lease| lease.as_millis() as u64),
        }
    }

    /// The processes that stand for the holder: who started it and whom it
    /// lives for, each once.
    pub fn owners(&self) -> impl Iterator<Item = Process> + '_ {
        let lives_for = self.while_pid.filter(|p| Some(*p) != self.started_by);
        self.started_by.into_iter().chain(lives_for)
    }
}

impl Owner {
    /// The owner record of this process.
    pub fn of_this_process(command: Option<Vec<String>>, data: Option<String>) -> Owner {
        Owner {
            tool: "zklock".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            host: hostname(),
            pid: std::process::id(),
            user: user_name(),
            command,
            time: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
            data,
            identity: None,
            deadline_ms: None,
            nested_in: Vec::new(),
            checks_cycles: false,
            lineage: None,
            detached: None,
            lock_delay_ms: None,
        }
    }

    /// The record with this process's lineage, and for a detached holder
    /// what `detached` says of it.
    pub fn in_lineage(mut self, detached: Option<Detachment>) -> Owner {
        self.lineage = Lineage::of_this_process();
        self.detached = detached;
        self
    }

    /// The record naming `group` as the command's process group (the
    /// guard's, which the command joins). Without a command there is
    /// nothing to nest in the hold, and the record names no group: zklock's
    /// own group is its caller's, whose other children are not nested.
    pub fn in_group(mut self, group: Option<i32>) -> Owner {
        self.identity = group.and_then(Identity::of_group);
        self
    }

    /// The record with the moment a `-w` wait of `timeout` from now gives up.
    pub fn with_deadline(mut self, timeout: Option<std::time::Duration>) -> Owner {
        self.deadline_ms = timeout.map(|t| crate::clock::now_ms() + t.as_millis() as i64);
        self
    }

    /// The record with the `--lock-delay` this contender keeps.
    pub fn with_lock_delay(mut self, delay: Option<std::time::Duration>) -> Owner {
        self.lock_delay_ms = delay.map(|delay| delay.as_millis() as u64);
        self
    }

    /// The record naming the enclosing holds this zklock is nested in.
    /// Only a nested zklock can be part of a cycle it could prove certain
    /// (nothing proven leads to the one node of a zklock nested in
    /// nothing), so it alone looks for one while it waits, and says so.
    pub fn nested_in(mut self, holds: Vec<String>) -> Owner {
        self.checks_cycles = !holds.is_empty();
        self.nested_in = holds;
        self
    }

    /// What the record says of `argv`: the program's name alone (`sh` for
    /// a `--shell` script), or the whole command line when `whole` is set.
    pub fn recorded_command(argv: &[String], shell: bool, whole: bool) -> Vec<String> {
        match (whole, shell) {
            (true, _) => argv.to_vec(),
            (false, true) => vec!["sh".to_owned()],
            (false, false) => argv.iter().take(1).cloned().collect(),
        }
    }

    /// Parses node data written by zklock; `None` for anyone else's data.
    pub fn parse(data: &[u8]) -> Option<Owner> {
        serde_json::from_slice::<Owner>(data)
            .ok()
            .filter(|owner| owner.tool == "zklock")
    }

    /// The record as node data.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("an owner record always serialises")
    }

    /// The command as `ps` shows a command line: its words joined by
    /// spaces; the program alone unless the record has its arguments.
    /// `None` when the holder runs no command.
    pub fn command_line(&self) -> Option<String> {
        let argv = self.command.as_ref().filter(|argv| !argv.is_empty())?;
        Some(argv.join(" "))
    }

    /// Who this is, for people: `user@host pid N COMMAND "data"`, the
    /// command as `ps` shows it, with its arguments only when the record
    /// has them.
    pub fn text(&self) -> String {
        let command = self.command_line();
        let data = self.data.as_ref().map(|data| format!("{data:?}"));
        [Some(self.summary()), command, data]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// A short description for people: `user@host pid N`.
    pub fn summary(&self) -> String {
        format!("{}@{} pid {}", self.user, self.host, self.pid)
    }
}

fn hostname() -> String {
    crate::sys::hostname().unwrap_or_else(|| "unknown".to_owned())
}

/// The name of the real user: from the password database, else `$USER`,
/// else `uid N`.
pub(super) fn user_name() -> String {
    let uid = crate::sys::real_uid();
    crate::sys::user_name(uid)
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| format!("uid {uid}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_foreign_data() {
        let owner = Owner::of_this_process(Some(vec!["./deploy.sh".into()]), Some("v2".into()));
        assert_eq!(Owner::parse(&owner.to_bytes()), Some(owner.clone()));
        assert_eq!(owner.pid, std::process::id());
        assert!(!owner.host.is_empty());
        assert_eq!(Owner::parse(b"10.0.0.7"), None);
        assert_eq!(Owner::parse(b"{\"tool\":\"other\"}"), None);
        assert_eq!(Owner::parse(b""), None);
    }

    /// A process group leader that is alive while the test runs: the test
    /// process itself (the leader of the group it runs in may be gone, as
    /// under a shell that started it in the background and exited).
    fn live_leader() -> i32 {
        std::process::id() as i32
    }

    #[test]
    fn identifies_its_process_group_and_reads_records_without_it() {
        let owner = Owner::of_this_process(None, None);
        assert_eq!(
            owner.identity, None,
            "no command, nothing nests in the hold"
        );
        let owner = owner.in_group(Some(live_leader()));
        let identity = owner.identity.clone().expect("Linux's /proc says");
        assert_eq!(identity.group, live_leader());
        assert!(identity.is(live_leader()));
        assert!(!identity.is(std::process::id() as i32 + 1_000_000));
        let copied = Identity {
            group_start: identity.group_start + 1,
            ..identity.clone()
        };
        assert!(
            !copied.is(live_leader()),
            "a reused pid is not the same group"
        );
        let old = br#"{"tool":"zklock","version":"0.1.0","host":"h","pid":1,"user":"u","command":null,"time":"t","data":null}"#;
        let parsed = Owner::parse(old).expect("records of older versions still parse");
        assert_eq!((parsed.identity, parsed.deadline_ms), (None, None));
        let waiting = owner.with_deadline(Some(std::time::Duration::from_secs(30)));
        let left = waiting.deadline_ms.unwrap() - crate::clock::now_ms();
        assert!((29_000..=30_000).contains(&left), "{left}");
        assert_eq!(Owner::parse(&waiting.to_bytes()), Some(waiting));
    }

    #[test]
    fn a_lineage_starts_with_this_process_and_names_each_by_its_start() {
        let owner = Owner::of_this_process(None, None).in_lineage(None);
        let lineage = owner.lineage.clone().expect("Linux's /proc says");
        let pids: Vec<i32> = lineage.processes.iter().map(|p| p.pid).collect();
        assert_eq!(pids[0], std::process::id() as i32);
        assert_eq!(pids.get(1), Some(&crate::sys::parent_pid()));
        assert!(pids.iter().all(|&pid| pid > 1));
        assert_eq!(lineage.processes[0], Process::of(pids[0]).unwrap());
        assert_eq!(owner.detached, None);
        assert_eq!(Owner::parse(&owner.to_bytes()), Some(owner));

        let me = Process::of(std::process::id() as i32).unwrap();
        let shell = Process { pid: 1, start: 2 };
        let both = Detachment {
            started_by: Some(shell),
            while_pid: Some(me),
            lease_ms: None,
        };
        assert_eq!(both.owners().collect::<Vec<_>>(), [shell, me]);
        let once = Detachment {
            while_pid: Some(shell),
            ..both
        };
        assert_eq!(once.owners().collect::<Vec<_>>(), [shell], "each once");
    }

    #[test]
    fn records_the_program_name_unless_asked_for_more() {
        let argv: Vec<String> = ["mysql", "-pS3CRET"].map(String::from).into();
        assert_eq!(Owner::recorded_command(&argv, false, false), ["mysql"]);
        assert_eq!(Owner::recorded_command(&argv, false, true), argv);
        let script = vec!["curl -u me:S3CRET x".to_owned()];
        assert_eq!(Owner::recorded_command(&script, true, false), ["sh"]);
        let shown = |command| Owner::of_this_process(command, None).command_line();
        assert_eq!(shown(Some(argv.clone())).as_deref(), Some("mysql -pS3CRET"));
        assert_eq!(shown(Some(vec!["mysql".into()])).as_deref(), Some("mysql"));
        assert_eq!(shown(Some(Vec::new())), None);
        assert_eq!(shown(None), None);
    }
}
