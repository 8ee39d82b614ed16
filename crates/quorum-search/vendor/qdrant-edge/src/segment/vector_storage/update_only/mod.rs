//! The write half of the appendable vector storages, for update-only segments.
//!
//! Each storage family decomposes into pieces that already append: the vectors
//! themselves into [`UpdateOnlyChunkedVectors`], the deleted flags into
//! [`UpdateOnlyStoredFlags`], the sparse values into [`UpdateOnlyBlobstore`].
//! What these writers add is the layout — which directory holds what — and the
//! rule that a point with no vector under a name still occupies its slot.
//!
//! [`UpdateOnlyChunkedVectors`]: crate::vector_storage::chunked_vectors::update_only::UpdateOnlyChunkedVectors
//! [`UpdateOnlyStoredFlags`]: crate::common::flags::update_only_stored_flags::UpdateOnlyStoredFlags
//! [`UpdateOnlyBlobstore`]: crate::common::update_only_blobstore::UpdateOnlyBlobstore

use std::path::Path;

use crate::common::types::PointOffsetType;
use crate::common::universal_io::{UniversalAppend, UniversalAppendFs};

use crate::segment::common::operation_error::{OperationError, OperationResult};
use crate::segment::data_types::vectors::{
    VectorElementType, VectorElementTypeByte, VectorElementTypeHalf, VectorRef,
};
use crate::segment::types::{VectorDataConfig, VectorStorageDatatype, VectorStorageType};
use crate::segment::vector_storage::dense::update_only::UpdateOnlyDenseVectorStorage;
use crate::segment::vector_storage::multi_dense::update_only::UpdateOnlyMultiDenseVectorStorage;
use crate::segment::vector_storage::sparse::update_only::UpdateOnlySparseVectorStorage;
use crate::segment::vector_storage::turbo::multi_turbo::update_only::UpdateOnlyMultiTurboVectorStorage;
use crate::segment::vector_storage::turbo::tq_bits;
use crate::segment::vector_storage::turbo::update_only::UpdateOnlyTurboVectorStorage;

/// One point's vector for one named storage, as a batch supplies it.
///
/// The two ways a vector arrives are the two halves of
/// [`FullyQualifiedPoint`][1]: `updated_vectors`, decoded by the batch, and
/// `stored_vectors`, carried over from the point's previous slot as
/// storage-native bytes that never need decoding.
///
/// [1]: crate::data_types::fully_qualified_point::FullyQualifiedPoint
#[derive(Clone, Copy)]
pub enum VectorToStore<'a> {
    /// Decoded by the batch.
    Decoded(VectorRef<'a>),
    /// Storage-native bytes, in the form [`retrieve_raw`][1] returns.
    ///
    /// [1]: crate::entry::entry_point::ReadSegmentEntry::retrieve_raw
    Raw(&'a [u8]),
    /// The point has no vector under this name.
    ///
    /// Its slot is still written — with a placeholder value — and flagged
    /// deleted, because slots are shared across every named storage of the
    /// segment: skipping one here would shift every later vector of this
    /// storage against the id tracker. This is what the writable path does in
    /// [`PlainVectorIndex::update_vector`][1].
    ///
    /// [1]: crate::index::plain_vector_index::PlainVectorIndex
    Missing,
}

/// The write half of one named vector storage, over the backend `S`.
///
/// Covers the appendable half of [`VectorStorageEnum`][1] — the storages an
/// update-only segment can have. The immutable ones are built, not appended to,
/// so they have no writer here.
///
/// [1]: crate::vector_storage::VectorStorageEnum
pub enum UpdateOnlyVectorStorage<S: UniversalAppend + 'static> {
    Dense(Box<UpdateOnlyDenseVectorStorage<VectorElementType>>),
    DenseByte(Box<UpdateOnlyDenseVectorStorage<VectorElementTypeByte>>),
    DenseHalf(Box<UpdateOnlyDenseVectorStorage<VectorElementTypeHalf>>),
    MultiDense(Box<UpdateOnlyMultiDenseVectorStorage<VectorElementType>>),
    MultiDenseByte(Box<UpdateOnlyMultiDenseVectorStorage<VectorElementTypeByte>>),
    MultiDenseHalf(Box<UpdateOnlyMultiDenseVectorStorage<VectorElementTypeHalf>>),
    Turbo(Box<UpdateOnlyTurboVectorStorage>),
    MultiTurbo(Box<UpdateOnlyMultiTurboVectorStorage>),
    Sparse(Box<UpdateOnlySparseVectorStorage<S>>),
}

impl<S: UniversalAppend + 'static> UpdateOnlyVectorStorage<S> {
    /// Open the writer for the storage `config` describes at `path`, creating it
    /// if it is not there yet.
    ///
    /// Fails for a storage type an update-only segment cannot have: the mmap
    /// ones are immutable, built whole rather than appended to.
    pub fn open(
        fs: &impl UniversalAppendFs<AppendFile = S>,
        path: &Path,
        config: &VectorDataConfig,
    ) -> OperationResult<Self> {
        match config.storage_type {
            VectorStorageType::ChunkedMmap | VectorStorageType::InRamChunkedMmap => {}
            storage_type @ (VectorStorageType::Mmap
            | VectorStorageType::InRamMmap
            | VectorStorageType::Memory
            | VectorStorageType::GraphInline) => {
                return Err(OperationError::service_error(format!(
                    "Cannot open a {storage_type:?} vector storage for appending: it is not an \
                     appendable storage type",
                )));
            }
        }

        let dim = config.size;
        let datatype = config.datatype.unwrap_or_default();
        let storage = match (config.multivector_config.is_some(), datatype) {
            (false, VectorStorageDatatype::Float32) => {
                Self::Dense(Box::new(UpdateOnlyDenseVectorStorage::open(fs, path, dim)?))
            }
            (false, VectorStorageDatatype::Uint8) => {
                Self::DenseByte(Box::new(UpdateOnlyDenseVectorStorage::open(fs, path, dim)?))
            }
            (false, VectorStorageDatatype::Float16) => {
                Self::DenseHalf(Box::new(UpdateOnlyDenseVectorStorage::open(fs, path, dim)?))
            }
            (
                false,
                VectorStorageDatatype::Turbo4
                | VectorStorageDatatype::Turbo8
                | VectorStorageDatatype::Turbo16,
            ) => Self::Turbo(Box::new(UpdateOnlyTurboVectorStorage::open(
                fs,
                path,
                dim,
                config.distance,
                tq_bits(datatype),
            )?)),
            (true, VectorStorageDatatype::Float32) => Self::MultiDense(Box::new(
                UpdateOnlyMultiDenseVectorStorage::open(fs, path, dim)?,
            )),
            (true, VectorStorageDatatype::Uint8) => Self::MultiDenseByte(Box::new(
                UpdateOnlyMultiDenseVectorStorage::open(fs, path, dim)?,
            )),
            (true, VectorStorageDatatype::Float16) => Self::MultiDenseHalf(Box::new(
                UpdateOnlyMultiDenseVectorStorage::open(fs, path, dim)?,
            )),
            (
                true,
                VectorStorageDatatype::Turbo4
                | VectorStorageDatatype::Turbo8
                | VectorStorageDatatype::Turbo16,
            ) => Self::MultiTurbo(Box::new(UpdateOnlyMultiTurboVectorStorage::open(
                fs,
                path,
                dim,
                config.distance,
                tq_bits(datatype),
            )?)),
        };

        Ok(storage)
    }

    /// Open the writer for a sparse vector storage at `path`. Sparse vectors
    /// are configured separately from dense ones, so they do not go through
    /// [`open`](Self::open).
    pub fn open_sparse(
        fs: &impl UniversalAppendFs<AppendFile = S>,
        path: &Path,
    ) -> OperationResult<Self> {
        Ok(Self::Sparse(Box::new(UpdateOnlySparseVectorStorage::open(
            fs, path,
        )?)))
    }

    /// Append one vector per point of a batch, starting at `start_slot`, and
    /// persist them.
    pub fn append_many<'a>(
        &mut self,
        fs: &impl UniversalAppendFs<AppendFile = S>,
        start_slot: PointOffsetType,
        vectors: impl IntoIterator<Item = VectorToStore<'a>>,
    ) -> OperationResult<()> {
        match self {
            Self::Dense(s) => s.append_many(fs, start_slot, vectors),
            Self::DenseByte(s) => s.append_many(fs, start_slot, vectors),
            Self::DenseHalf(s) => s.append_many(fs, start_slot, vectors),
            Self::MultiDense(s) => s.append_many(fs, start_slot, vectors),
            Self::MultiDenseByte(s) => s.append_many(fs, start_slot, vectors),
            Self::MultiDenseHalf(s) => s.append_many(fs, start_slot, vectors),
            Self::Turbo(s) => s.append_many(fs, start_slot, vectors),
            Self::MultiTurbo(s) => s.append_many(fs, start_slot, vectors),
            Self::Sparse(s) => s.append_many(fs, start_slot, vectors),
        }
    }
}
