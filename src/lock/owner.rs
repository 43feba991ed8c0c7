//! The owner record zklock writes into its contender nodes: who
//! holds or waits, from where, running what.

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
        }
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
fn user_name() -> String {
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

    #[test]
    fn records_the_program_name_unless_asked_for_more() {
        let argv: Vec<String> = ["mysql", "-pS3CRET"].map(String::from).into();
        assert_eq!(Owner::recorded_command(&argv, false, false), ["mysql"]);
        assert_eq!(Owner::recorded_command(&argv, false, true), argv);
        let script = vec!["curl -u me:S3CRET x".to_owned()];
        assert_eq!(Owner::recorded_command(&script, true, false), ["sh"]);
    }
}
