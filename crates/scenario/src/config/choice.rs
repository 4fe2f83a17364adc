//! Options written as one word of a fixed set (`flush = "auto"`, `paths = ["gpudirect"]`): each
//! is an enum that serde reads through [`Choice`], so an unknown word is refused with the words
//! the key accepts, and the resolved config writes the same word back.

pub(crate) use gdrsim_model::choice;
pub use gdrsim_model::choice::Choice;

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
