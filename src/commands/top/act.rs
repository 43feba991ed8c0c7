//! Acting from `top` on the lock or contender chosen: release (break) a
//! holder, revoke (ask it to let go), or reap a dead contender, as
//! `release --holders`, `release --revoke` and `reap` do, through the same
//! code in [`crate::admin`].
//!
//! An action is a confirmation first, drawn in the view, as htop's kill
//! is: it says what will be done and to whom (each node whole, its session,
//! and whether that session is connected as far as the last survey knows),
//! Esc cancels, and nothing happens without `y`. What it acts on is taken
//! when the confirmation opens, and the act is on those incarnations alone
//! (czxid, owner session and version, as shown): a node that changed, went,
//! or was made again under the same name while the person read is left
//! alone, and the outcome line says so.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::admin::reap::{self, Skipped, node_to_reap};
use crate::admin::release::{ReleaseAction, Released, break_holders, obeys_revoke};
use crate::config::Globals;
use crate::lock::end::{EndHow, Ender, Ending, MAX_REASON_BYTES};
use crate::model::{Contender, Lock};
use crate::output;
use crate::zk::delete::Deletion;
use crate::zk::{self, sessions::Survey};

use super::super::{connected_warning, state, with_session};

/// What can be done to a lock's contenders from `top`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Act {
    /// Delete the holders (or the contender chosen), end record `broken`.
    Release,
    /// Write `__REVOKE__` into the holders (or the holder chosen).
    Revoke,
    /// Delete the contenders known to be disconnected (or the one chosen),
    /// end record `reaped`.
    Reap,
}

impl Act {
    /// The action a key asks for, if any.
    pub(super) fn of_key(code: KeyCode) -> Option<Act> {
        match code {
            KeyCode::Char('r') => Some(Act::Release),
            KeyCode::Char('v') => Some(Act::Revoke),
            KeyCode::Char('x') => Some(Act::Reap),
            _ => None,
        }
    }

    /// How the end record names a delete of this action.
    fn how(self) -> EndHow {
        match self {
            Act::Reap => EndHow::Reaped,
            Act::Release | Act::Revoke => EndHow::Broken,
        }
    }

    fn deletes(self) -> bool {
        self != Act::Revoke
    }
}

/// The keys of the actions, for the line of keys.
pub(super) const ACTION_KEYS: &str = "r: release  v: revoke  x: reap";

/// A confirmation open in the view: the action, and the contenders it is
/// on as they were shown when it opened.
#[derive(Debug)]
pub(super) struct Confirm {
    act: Act,
    lock: String,
    /// Each with whether it held, from when the confirmation opened.
    targets: Vec<(Contender, bool)>,
    reason: String,
    /// Typing the reason.
    editing: bool,
}

/// What a key did to a confirmation.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Answer {
    /// It stays open.
    Open,
    /// Cancelled: nothing is done.
    Cancel,
    /// Confirmed.
    Yes,
}

impl Confirm {
    /// The confirmation of `act` on `lock`: on the contender at `chosen` in
    /// its queue when one is chosen (the lock opened), else on its holders
    /// (release, revoke) or its contenders known to be disconnected (reap);
    /// each with its client from `survey`, its age counted to `now_ms`.
    /// `Err` says why there is nothing to confirm.
    pub(super) fn open(
        act: Act,
        lock: &Lock,
        chosen: Option<usize>,
        survey: Option<&Survey>,
        now_ms: i64,
    ) -> Result<Confirm, String> {
        let shown = output::inert(&lock.path);
        if !lock.kind.may_be_broken() {
            return Err(format!(
                "{shown} is a {} (a service picks its leader with it): zklock never deletes or \
                 revokes its nodes",
                lock.kind.as_str()
            ));
        }
        let mut targets: Vec<(Contender, bool)> = lock
            .standings()
            .enumerate()
            .filter(|(n, _)| chosen.is_none_or(|chosen| chosen == *n))
            .map(|(_, (contender, holds))| {
                let mut contender = contender.clone();
                contender.age_ms = now_ms.saturating_sub(contender.stat.ctime);
                if let Some(survey) = survey {
                    contender.attach_client(survey);
                }
                (contender, holds)
            })
            .collect();
        match (act, chosen) {
            (Act::Revoke, Some(_)) if targets.iter().any(|(_, holds)| !holds) => {
                return Err("a waiter holds nothing to let go of: revoke asks holders".to_owned());
            }
            (Act::Release | Act::Revoke, None) => targets.retain(|(_, holds)| *holds),
            (Act::Reap, None) => targets.retain(|(contender, _)| is_disconnected(contender)),
            _ => {}
        }
        if targets.is_empty() {
            return Err(match act {
                Act::Reap => format!(
                    "no contender of {shown} is known to be disconnected; open the lock \
                     (Enter) and choose one to reap"
                ),
                Act::Release | Act::Revoke => format!("nothing holds {shown}"),
            });
        }
        Ok(Confirm {
            act,
            lock: lock.path.clone(),
            targets,
            reason: String::new(),
            editing: false,
        })
    }

    /// Takes a key: `y` confirms, Esc or `n` cancels, Tab types a reason
    /// (for the end record; Enter or Tab ends it). Any other key does
    /// nothing: only a yes acts.
    pub(super) fn on_key(&mut self, key: KeyEvent) -> Answer {
        if key.code == KeyCode::Esc {
            return Answer::Cancel;
        }
        if self.editing {
            match key.code {
                KeyCode::Enter | KeyCode::Tab => self.editing = false,
                KeyCode::Backspace => {
                    self.reason.pop();
                }
                KeyCode::Char(c)
                    if !key.modifiers.contains(KeyModifiers::CONTROL)
                        && self.reason.len() + c.len_utf8() <= MAX_REASON_BYTES =>
                {
                    self.reason.push(c);
                }
                _ => {}
            }
            return Answer::Open;
        }
        match key.code {
            KeyCode::Char('y' | 'Y') => Answer::Yes,
            KeyCode::Char('n' | 'N') => Answer::Cancel,
            KeyCode::Tab if self.act.deletes() => {
                self.editing = true;
                Answer::Open
            }
            _ => Answer::Open,
        }
    }

    /// The line of keys while it is open.
    pub(super) fn keys(&self) -> &'static str {
        match (self.editing, self.act.deletes()) {
            (true, _) => "type the reason, Enter: done  Esc: cancel",
            (false, true) => "y: yes  n or Esc: cancel  Tab: reason",
            (false, false) => "y: yes  n or Esc: cancel",
        }
    }

    /// What it says, before it is answered: what will be done, to which
    /// nodes (each whole, with its state, session, age, whether connected,
    /// and owner), a warning for every connected session it would delete,
    /// and the reason given. Not yet escaped: the view escapes and wraps.
    pub(super) fn lines(&self) -> Vec<String> {
        let count = |n: usize| output::counted(n, "contender", "contenders");
        let mut lines = vec![match self.act {
            Act::Release => format!(
                "Release {}: delete {} (end record: broken)",
                self.lock,
                count(self.targets.len())
            ),
            Act::Revoke => format!(
                "Revoke {}: write __REVOKE__ into {}, which let go themselves; \
                 nothing is deleted",
                self.lock,
                count(self.targets.len())
            ),
            Act::Reap => format!(
                "Reap {}: delete {} (end record: reaped)",
                self.lock,
                count(self.targets.len())
            ),
        }];
        for (contender, holds) in &self.targets {
            lines.push(format!("  {}", contender.path));
            let mut about = format!(
                "    {}  session {}  age {}  {}  {}",
                state(&self.lock, contender, *holds),
                zk::format_session(contender.session()),
                output::format_age_ms(contender.age_ms),
                connection(contender),
                contender.owner_text(),
            );
            if self.act == Act::Revoke && !obeys_revoke(contender) {
                about += "  (its library ignores __REVOKE__: left alone)";
            }
            lines.push(about);
        }
        if self.act.deletes() {
            let connected = self
                .targets
                .iter()
                .filter(|(c, _)| c.client.as_ref().is_some_and(|c| c.connected))
                .count();
            lines.extend(connected_warning(connected).lines().map(str::to_owned));
            lines.push(match (&self.editing, self.reason.is_empty()) {
                (true, _) => format!("Reason: {}_", self.reason),
                (false, true) => "Reason: none (Tab to give one)".to_owned(),
                (false, false) => format!("Reason: {}", self.reason),
            });
        }
        lines.push(format!(
            "{}? Only y does it; Esc cancels.",
            match self.act {
                Act::Release | Act::Reap => "Delete",
                Act::Revoke => "Ask to let go",
            }
        ));
        lines
    }

    /// What is said while the action runs.
    pub(super) fn working(&self) -> String {
        let verb = match self.act {
            Act::Release => "releasing",
            Act::Revoke => "revoking",
            Act::Reap => "reaping",
        };
        format!("{verb} {}…", self.lock)
    }
}

/// True when every member answered and none lists the contender's session.
fn is_disconnected(contender: &Contender) -> bool {
    contender.client.as_ref().is_some_and(|c| !c.connected)
}

fn connection(contender: &Contender) -> &'static str {
    match &contender.client {
        Some(client) if client.connected => "connected",
        Some(_) => "not connected",
        None if contender.session() == 0 => "no session",
        None => "connection unknown",
    }
}

/// Does what `confirm` was confirmed for, on a session of its own, and
/// says what became of each node (not yet escaped: the view escapes).
pub(super) async fn perform(globals: &Globals, confirm: Confirm) -> Vec<String> {
    let ending = Ending {
        how: confirm.act.how(),
        by: Ender::of_this_process(),
        reason: Some(confirm.reason).filter(|reason| !reason.is_empty()),
    };
    let lock = confirm.lock;
    let mut said = Vec::new();
    let done = with_session(globals, async |session| match confirm.act {
        Act::Release | Act::Revoke => {
            let action = match confirm.act {
                Act::Revoke => ReleaseAction::Revoke { force_after: None },
                _ => ReleaseAction::Holders,
            };
            let contenders = confirm.targets.into_iter().map(|(c, _)| c).collect();
            let mut report = Released::default();
            let result = break_holders(session, action, contenders, &ending, &mut report).await;
            said = outcome_lines(ending.how, report.deleted, report.revoked, report.skipped);
            result
        }
        Act::Reap => {
            let nodes: Vec<_> = confirm
                .targets
                .iter()
                .map(|(contender, holds)| node_to_reap(&lock, contender, *holds))
                .collect();
            let (mut reaped, result) = reap::execute(session, &nodes, &ending, |_| {}).await;
            let gone = reaped.gone.into_iter().map(|path| Skipped {
                path,
                reason: Deletion::Gone
                    .left_alone_because()
                    .unwrap_or_default()
                    .to_owned(),
            });
            reaped.skipped.extend(gone);
            said = outcome_lines(ending.how, reaped.deleted, Vec::new(), reaped.skipped);
            result.map_err(anyhow::Error::from)
        }
    })
    .await;
    if let Err(err) = done {
        said.push(format!("failed: {err:#}"));
    }
    said
}

/// A line per node: deleted (with its end record), asked to let go, or left
/// alone and why.
fn outcome_lines(
    how: EndHow,
    deleted: Vec<String>,
    revoked: Vec<String>,
    skipped: Vec<Skipped>,
) -> Vec<String> {
    let deleted = deleted
        .into_iter()
        .map(|path| format!("deleted {path} (end record: {})", how.as_str()));
    let revoked = revoked
        .into_iter()
        .map(|path| format!("asked {path} to let go (__REVOKE__)"));
    let skipped = skipped
        .into_iter()
        .map(|skipped| format!("left alone {}: {}", skipped.path, skipped.reason));
    deleted.chain(revoked).chain(skipped).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::LockKind;
    use crate::model::locks::{NodeRead, queue_lock};

    /// `/l` held by session 0x41, with session 0x42 waiting.
    fn lock() -> Lock {
        let node = |n: i64| {
            (
                format!("lock-000000000{n}"),
                NodeRead {
                    data: Vec::new(),
                    stat: zk::test_stat(n + 1, 0x41 + n),
                },
            )
        };
        queue_lock("/l", vec![node(0), node(1)], 0).expect("a lock")
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::from(code)
    }

    fn sessions(confirm: &Confirm) -> Vec<i64> {
        confirm.targets.iter().map(|(c, _)| c.session()).collect()
    }

    #[test]
    fn only_y_acts_and_esc_or_n_cancels() {
        let mut confirm = Confirm::open(Act::Release, &lock(), None, None, 0).unwrap();
        for code in [
            KeyCode::Enter,
            KeyCode::Char('q'),
            KeyCode::Char('x'),
            KeyCode::Char(' '),
            KeyCode::Down,
        ] {
            assert_eq!(confirm.on_key(key(code)), Answer::Open, "{code:?}");
        }
        assert_eq!(confirm.on_key(key(KeyCode::Esc)), Answer::Cancel);
        assert_eq!(confirm.on_key(key(KeyCode::Char('n'))), Answer::Cancel);
        assert_eq!(confirm.on_key(key(KeyCode::Char('y'))), Answer::Yes);
    }

    #[test]
    fn a_reason_takes_every_key_but_esc_until_enter() {
        let mut confirm = Confirm::open(Act::Reap, &lock(), Some(1), None, 0).unwrap();
        assert_eq!(confirm.on_key(key(KeyCode::Tab)), Answer::Open);
        for c in "yes n".chars() {
            assert_eq!(confirm.on_key(key(KeyCode::Char(c))), Answer::Open);
        }
        assert_eq!(confirm.on_key(key(KeyCode::Enter)), Answer::Open);
        assert_eq!(confirm.reason, "yes n");
        assert!(confirm.lines().iter().any(|line| line == "Reason: yes n"));
        confirm.on_key(key(KeyCode::Tab));
        assert_eq!(confirm.on_key(key(KeyCode::Esc)), Answer::Cancel);
        // A revocation ends nothing, so it has no reason to give.
        let mut revoke = Confirm::open(Act::Revoke, &lock(), None, None, 0).unwrap();
        revoke.on_key(key(KeyCode::Tab));
        assert_eq!(revoke.on_key(key(KeyCode::Char('y'))), Answer::Yes);
    }

    #[test]
    fn each_action_takes_what_it_may_act_on() {
        let lock = lock();
        let open = |act, chosen| Confirm::open(act, &lock, chosen, None, 0);
        assert_eq!(sessions(&open(Act::Release, None).unwrap()), [0x41]);
        assert_eq!(sessions(&open(Act::Revoke, None).unwrap()), [0x41]);
        assert_eq!(sessions(&open(Act::Release, Some(1)).unwrap()), [0x42]);
        assert_eq!(sessions(&open(Act::Reap, Some(1)).unwrap()), [0x42]);
        // Waiters hold nothing to let go of; with no survey, no contender
        // is known to be disconnected.
        assert!(open(Act::Revoke, Some(1)).is_err());
        assert!(open(Act::Reap, None).is_err());
        let mut election = lock.clone();
        election.kind = LockKind::Election;
        for act in [Act::Release, Act::Revoke, Act::Reap] {
            assert!(Confirm::open(act, &election, Some(0), None, 0).is_err());
        }
    }
}
