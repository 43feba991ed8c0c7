//! End records as the log carries them: the data a multi writes into a lock
//! directory beside the deletes of the nodes it ended (see `lock::end`).
//!
//! A record names every node it ended, and a log may carry one of any size
//! the server took (a break of thousands of holders, or a record made to
//! hurt). So it is read as a stream: each node it names is handed to the
//! caller as it is read, and only what the record says of all of them is
//! kept. The caller keeps the nodes it deletes in the same transaction, and
//! nothing else. Its `how` is read as a word, so that an end this build
//! names on its own (a lost hold) reads as itself.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::replay::How;
use crate::lock::end::{self, Ender};

/// What an end record says of every node it names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Recorded {
    pub how: How,
    pub by: Ender,
    pub reason: Option<String>,
}

/// Reads `data` as an end record, handing each node it names to `named`
/// (its name and its session as the record writes it, `0x` and hex) as
/// it goes; what the record says of them, or `None` when `data` is no end
/// record of a version and `how` known here (then whatever `named` heard
/// means nothing).
pub(super) fn read(data: &[u8], mut named: impl FnMut(&str, &str)) -> Option<Recorded> {
    if !data.starts_with(b"{") {
        return None;
    }
    let mut json = serde_json::Deserializer::from_slice(data);
    let recorded = Document(&mut named).deserialize(&mut json).ok()?;
    json.end().ok()?;
    recorded
}

/// The document: the record under its key.
struct Document<'n, F>(&'n mut F);

/// The record inside it.
struct Record<'n, F>(&'n mut F);

/// Its nodes.
struct Nodes<'n, F>(&'n mut F);

/// One node it names, borrowed from the data where no escape is in it.
#[derive(Deserialize)]
struct Named<'a> {
    #[serde(borrow)]
    node: Cow<'a, str>,
    #[serde(borrow)]
    session: Cow<'a, str>,
}

impl<'de, F: FnMut(&str, &str)> DeserializeSeed<'de> for Document<'_, F> {
    type Value = Option<Recorded>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, F: FnMut(&str, &str)> Visitor<'de> for Document<'_, F> {
    type Value = Option<Recorded>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an end record")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut record = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key == "zklock_end" && record.is_none() {
                record = Some(map.next_value_seed(Record(&mut *self.0))?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        record.ok_or_else(|| de::Error::missing_field("zklock_end"))
    }
}

impl<'de, F: FnMut(&str, &str)> DeserializeSeed<'de> for Record<'_, F> {
    type Value = Option<Recorded>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, F: FnMut(&str, &str)> Visitor<'de> for Record<'_, F> {
    type Value = Option<Recorded>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the record of an end")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut version, mut nodes, mut how, mut by, mut reason) = (None, false, None, None, None);
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match &*key {
                "version" => version = Some(map.next_value::<u32>()?),
                "nodes" => nodes = map.next_value_seed(Nodes(&mut *self.0))?,
                "how" => how = Some(map.next_value::<Cow<'de, str>>()?),
                "by" => by = Some(map.next_value::<Ender>()?),
                "reason" => reason = map.next_value::<Option<String>>()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let missing = |field| de::Error::missing_field(field);
        let version = version.ok_or_else(|| missing("version"))?;
        let how = how.ok_or_else(|| missing("how"))?;
        let by = by.ok_or_else(|| missing("by"))?;
        if !nodes {
            return Err(missing("nodes"));
        }
        Ok((version == end::VERSION)
            .then(|| How::recorded(&how))
            .flatten()
            .map(|how| Recorded { how, by, reason }))
    }
}

impl<'de, F: FnMut(&str, &str)> DeserializeSeed<'de> for Nodes<'_, F> {
    /// True once the list was read.
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(&str, &str)> Visitor<'de> for Nodes<'_, F> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the nodes an end record names")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while let Some(named) = seq.next_element::<Named<'de>>()? {
            (self.0)(&named.node, &named.session);
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::end::{EndHow, Ending};

    fn nodes_of(data: &[u8]) -> (Option<Recorded>, Vec<(String, String)>) {
        let mut named = Vec::new();
        let recorded = read(data, |node, session| {
            named.push((node.to_owned(), session.to_owned()))
        });
        (recorded, named)
    }

    #[test]
    fn reads_what_zklock_writes_and_hands_out_each_node() {
        let ending = Ending {
            reason: Some("stuck \"deploy\"".into()),
            ..Ending::new(EndHow::Broken, Ender::of_this_process())
        };
        let data = ending
            .record(
                [("/l/lock-0000000001", 0x10), ("/l/lock-0000000002", 0x11)],
                None,
                None,
            )
            .to_bytes();
        let (recorded, named) = nodes_of(&data);
        let recorded = recorded.expect("a record");
        assert_eq!(recorded.how, How::Broken);
        assert_eq!(recorded.by, ending.by);
        assert_eq!(recorded.reason.as_deref(), Some("stuck \"deploy\""));
        assert_eq!(
            named,
            [
                ("lock-0000000001".to_owned(), "0x10".to_owned()),
                ("lock-0000000002".to_owned(), "0x11".to_owned())
            ]
        );
    }

    #[test]
    fn a_lost_hold_reads_as_lost_and_unknown_words_and_versions_as_no_record() {
        let record = |version: u32, how: &str| {
            format!(
                r#"{{"zklock_end":{{"version":{version},"nodes":[{{"node":"n","session":"0x1"}}],"how":"{how}","by":{{"user":"u","host":"h","pid":1}},"reason":null,"ran":null}}}}"#
            )
        };
        let lost = read(record(1, "lost").as_bytes(), |_, _| {}).expect("a record");
        assert_eq!(lost.how, How::Lost);
        assert!(!lost.how.is_clean());
        assert_eq!(read(record(1, "vanished").as_bytes(), |_, _| {}), None);
        assert_eq!(read(record(2, "broken").as_bytes(), |_, _| {}), None);
        for other in [
            &b"{}"[..],
            b"3",
            b"{\"zklock_end\":{}}",
            b"",
            b"{\"zklock_end\":",
        ] {
            assert_eq!(read(other, |_, _| {}), None, "{other:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_data_never_panics(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..256)) {
            let _ = read(&data, |_, _| {});
            let _ = read(&[b"{".as_slice(), &data].concat(), |_, _| {});
        }
    }
}
