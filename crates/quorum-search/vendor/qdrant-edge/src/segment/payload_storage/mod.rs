pub mod condition_checker;
#[cfg(feature = "testing")]
pub mod in_memory_payload_storage;
#[cfg(feature = "testing")]
pub mod in_memory_payload_storage_impl;
mod memory_reporter;
mod payload_storage_base;
pub mod payload_storage_enum;
pub mod payload_storage_impl;
pub mod query_checker;
pub mod read_only;
#[cfg(test)]
mod tests;
pub mod update_only;

pub use payload_storage_base::*;
