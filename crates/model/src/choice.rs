//! Enums written as one word of a fixed set (`flush = "auto"`, `class = "PIX"`): each is read
//! and written through [`Choice`], so an unknown word is refused with the words it accepts and
//! a value writes back the same word. The model's own such enums (the nvidia-smi class, the WQE
//! delivery, the CPU family) get their words here; the study layer's config enums use the same
//! trait and macro.

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
#[macro_export]
macro_rules! choice {
    ($($t:ty),* $(,)?) => {$(
        impl $crate::choice::Choice for $t {
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
                use $crate::choice::Choice;
                s.serialize_str(self.word())
            }
        }
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                use $crate::choice::Choice;
                                f.pad(self.word())
            }
        }
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                use $crate::choice::Choice;
                let word = String::deserialize(d)?;
                <$t>::from_word(&word).ok_or_else(|| {
                    serde::de::Error::custom(format!("{word:?}, expected {}", <$t>::expected()))
                })
            }
        }
    };
}

choice!(
    crate::topology::Affinity,
    crate::topology::spec::WqeDelivery,
    crate::topology::CpuFamily,
    crate::topology::spec::Fabric,
    crate::topology::spec::Routing,
);
