//! Options written as one word of a fixed set (`flush = "auto"`, `paths = ["gpudirect"]`): each
//! is an enum that serde reads through [`Choice`], so an unknown word is refused with the words
//! the key accepts, and the resolved config writes the same word back.

/// An enum whose values a config writes as words.
pub trait Choice: Copy + PartialEq + Sized + 'static {
    /// Every value, in the order messages list their words.
    const ALL: &'static [Self];

    /// The word a config writes for the value.
    fn word(self) -> &'static str;

    /// What a key of this kind expects, for messages.
    fn expected() -> String {
        format!("one of {}", Self::words().join(", "))
    }

    /// Every word, in order.
    fn words() -> Vec<&'static str> {
        Self::ALL.iter().map(|c| c.word()).collect()
    }

    /// The value whose word is `word`, if any.
    fn from_word(word: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.word() == word)
    }
}

/// Implements [`Choice`] (from the type's `ALL` and `name()`), and through it serde's
/// `Deserialize` and `Serialize` and `Display` (each the word). The error reads "WORD, expected one of ...", which the loader turns into the usual
/// "key: expected ..., found ..." message.
macro_rules! choice {
    ($($t:ty),* $(,)?) => {$(
        impl $crate::config::choice::Choice for $t {
            const ALL: &'static [Self] = &<$t>::ALL;
            fn word(self) -> &'static str {
                self.name()
            }
        }
        choice!(@serde $t);
    )*};
    (@serde $t:ty) => {
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use $crate::config::choice::Choice;
                s.serialize_str(self.word())
            }
        }
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                use $crate::config::choice::Choice;
                                f.pad(self.word())
            }
        }
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                use $crate::config::choice::Choice;
                let word = String::deserialize(d)?;
                <$t>::from_word(&word).ok_or_else(|| {
                    serde::de::Error::custom(format!("{word:?}, expected {}", <$t>::expected()))
                })
            }
        }
    };
}
pub(crate) use choice;

#[cfg(test)]
mod tests {
    use super::Choice;
    use crate::config::{FlushMode, Op, PathKind};

    #[test]
    fn every_word_reads_back_to_its_value() {
        for p in PathKind::ALL {
            assert_eq!(PathKind::from_word(p.word()), Some(p));
        }
        for o in Op::ALL {
            assert_eq!(Op::from_word(o.word()), Some(o));
        }
        assert_eq!(FlushMode::from_word("sometimes"), None);
        assert_eq!(FlushMode::expected(), "one of auto, rdma_read, none");
    }
}
