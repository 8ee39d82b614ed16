mod live_reload;
mod read_only;
mod read_write;

pub use read_only::QuantizedChunkedStorageRead;
pub use read_write::{QuantizedChunkedStorage, QuantizedChunkedStorageBuilder};
