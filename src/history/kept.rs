//! What the replay keeps of a contender while it lives: small, whatever its
//! node held.
//!
//! A log or snapshot may carry a name or data of tens of megabytes (a
//! server whose `jute.maxbuffer` was raised, or a file made to hurt), and
//! the replay holds every live contender until it ends. So a contender
//! keeps its owner record parsed (not the bytes it came in), any other data
//! as text cut at [`DATA_KEPT`] bytes, and its name and lock path whole up
//! to [`NAME_KEPT`] bytes (the longest path Linux takes, and far longer
//! than any name a lock library makes), beyond that shortened to their two
//! ends around their length and a digest of the whole, which keeps two
//! long names apart.

use std::borrow::Cow;
use std::hash::{DefaultHasher, Hash, Hasher};

use crate::lock::{Dialect, Owner};
use crate::model::locks::owner_text;

/// The longest name or lock path kept whole.
pub(super) const NAME_KEPT: usize = 4096;

/// The most of a datum kept, as text.
pub(super) const DATA_KEPT: usize = 1024;

/// The largest data read as an owner record. zklock's own records are a
/// kilobyte or two; a larger one would be kept whole, so it is shown as
/// data instead.
pub(super) const OWNER_RECORD_MAX: usize = 64 << 10;

/// How many bytes of each end a shortened name keeps.
const END_KEPT: usize = 64;

/// `text` whole when it is at most [`NAME_KEPT`] bytes; else its first and
/// last bytes around its length and a digest of it: `head…[N bytes
/// #digest]…tail`. The tail keeps a contender's sequence number.
pub(super) fn name(text: &str) -> Cow<'_, str> {
    if text.len() <= NAME_KEPT {
        return Cow::Borrowed(text);
    }
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    let head = &text[..boundary_at_or_before(text, END_KEPT)];
    let mut from = text.len() - END_KEPT;
    while !text.is_char_boundary(from) {
        from += 1;
    }
    let tail = &text[from..];
    Cow::Owned(format!(
        "{head}…[{} bytes #{:016x}]…{tail}",
        text.len(),
        hasher.finish()
    ))
}

/// Whose a contender is, as its data says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Who {
    /// zklock's owner record.
    Owner(Box<Owner>),
    /// Any other data: as text, cut at [`DATA_KEPT`] bytes (`None` when
    /// empty), and whom it names for people where that is not the text
    /// itself (HBase's decoded owner, a text with control characters
    /// escaped), cut alike.
    Other {
        data: Option<Box<str>>,
        named: Option<Box<str>>,
    },
}

impl Who {
    /// Whose a node of `dialect` owned by `session` is, with `data`.
    pub(super) fn of(dialect: Dialect, data: &[u8], session: i64) -> Who {
        if let Some(owner) = Some(data)
            .filter(|data| data.len() <= OWNER_RECORD_MAX)
            .and_then(Owner::parse)
        {
            return Who::Owner(Box::new(owner));
        }
        if data.is_empty() {
            return Who::Other {
                data: None,
                named: None,
            };
        }
        let cut = &data[..data.len().min(DATA_KEPT)];
        let text_of = |shown: &str| text(shown, data.len());
        let data = text_of(&String::from_utf8_lossy(cut));
        let named =
            Some(text_of(&owner_text(dialect, cut, session))).filter(|named| *named != data);
        Who::Other {
            data: Some(data),
            named,
        }
    }

    /// Whom it names, for people: zklock's owner record, what the data
    /// names, or its session (see `model::locks::owner_text`).
    pub(crate) fn owner_text(&self, session: i64) -> String {
        match self {
            Who::Owner(owner) => owner.text(),
            Who::Other {
                named: Some(named), ..
            } => named.to_string(),
            Who::Other {
                data: Some(data), ..
            } => data.to_string(),
            Who::Other { .. } => owner_text(Dialect::Generic, b"", session),
        }
    }

    /// The owner record, when it is one.
    pub(crate) fn owner(&self) -> Option<&Owner> {
        match self {
            Who::Owner(owner) => Some(owner),
            Who::Other { .. } => None,
        }
    }
}

/// `text`, made from the first bytes of a datum of `len` bytes, cut at
/// [`DATA_KEPT`] bytes and marked when the datum was longer.
fn text(text: &str, len: usize) -> Box<str> {
    let kept = &text[..boundary_at_or_before(text, DATA_KEPT)];
    if len <= DATA_KEPT && kept.len() == text.len() {
        return kept.into();
    }
    format!("{kept}…[{len} bytes]").into()
}

/// The last char boundary of `text` at or before byte `at`.
fn boundary_at_or_before(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn short_names_are_kept_whole_and_long_ones_apart() {
        assert_eq!(name("lock-0000000001"), "lock-0000000001");
        let long = |c: char| format!("{}-lock-0000000007", c.to_string().repeat(5000));
        assert_eq!(name(&"a".repeat(NAME_KEPT)).len(), NAME_KEPT);
        let (a, b) = (long('a'), long('b'));
        let (kept_a, kept_b) = (name(&a), name(&b));
        assert!(kept_a.len() < 200, "{kept_a}");
        assert!(kept_a.ends_with("-lock-0000000007"), "{kept_a}");
        assert!(kept_a.contains("[5016 bytes #"), "{kept_a}");
        assert_ne!(kept_a, kept_b);
        assert_eq!(kept_a, name(&a), "the same name keeps the same form");
    }

    #[test]
    fn data_is_kept_as_cut_text_and_owner_records_parsed() {
        let owner = Owner::of_this_process(None, Some("v2".into()));
        assert_eq!(
            Who::of(Dialect::Curator, &owner.to_bytes(), 1),
            Who::Owner(Box::new(owner))
        );
        let worker = Who::of(Dialect::Kazoo, b"worker-1", 1);
        assert_eq!(
            worker,
            Who::Other {
                data: Some("worker-1".into()),
                named: None
            }
        );
        assert_eq!(worker.owner_text(1), "worker-1");
        let empty = Who::of(Dialect::Kazoo, b"", 0x1f);
        assert_eq!(empty.owner_text(0x1f), "session 0x1f");
        let escaped = Who::of(Dialect::Kazoo, b"a\x1bb", 1);
        assert_eq!(escaped.owner_text(1), "a\\x1bb");
        let big = vec![b'\x1b'; 10 << 20];
        let Who::Other { data, named } = Who::of(Dialect::Kazoo, &big, 1) else {
            panic!("no owner record");
        };
        let data = data.unwrap();
        assert!(data.len() < DATA_KEPT + 32, "{}", data.len());
        assert!(data.ends_with("…[10485760 bytes]"), "{data}");
        let named = named.unwrap();
        assert!(named.len() < DATA_KEPT + 32, "{}", named.len());
    }

    proptest! {
        #[test]
        fn whatever_a_node_holds_a_contender_keeps_little(
            name_len in 0usize..20_000,
            data in proptest::collection::vec(any::<u8>(), 0..20_000),
            c in any::<char>(),
        ) {
            let text: String = std::iter::repeat_n(c, name_len / c.len_utf8().max(1)).collect();
            prop_assert!(name(&text).len() <= NAME_KEPT.max(END_KEPT * 2 + 64));
            let who = Who::of(Dialect::Generic, &data, 7);
            prop_assert!(who.owner_text(7).len() <= DATA_KEPT + 32);
            if let Who::Other { data, .. } = who {
                prop_assert!(data.map_or(0, |d| d.len()) <= DATA_KEPT + 32);
            }
        }
    }
}
