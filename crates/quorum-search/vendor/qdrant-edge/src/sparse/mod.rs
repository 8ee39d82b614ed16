pub mod common;
pub mod index;
pub(crate) mod search_scratch;

pub use search_scratch::{SearchScratch, SearchScratchPool};
