pub mod appendable_mmap_multi_dense_vector_storage;
mod buffered_offsets;
pub mod read_only;
pub mod update_only;
pub mod volatile_multi_dense_vector_storage;
