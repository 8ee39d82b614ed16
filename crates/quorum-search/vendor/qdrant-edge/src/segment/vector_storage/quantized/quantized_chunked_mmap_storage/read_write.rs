use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::common::ambient;
use crate::common::generic_consts::{AccessPattern, Random};
use crate::common::mmap::{Advice, AdviceSetting, Flusher};
use crate::common::reason::reason;
use crate::common::types::PointOffsetType;
use crate::common::universal_io::{MmapFile, Populate, UniversalWrite, UserData};

use crate::segment::common::operation_error::OperationResult;
use crate::segment::vector_storage::VectorOffsetType;
use crate::segment::vector_storage::chunked_vectors::ChunkedVectors;

/// Appendable (chunked) quantized storage, generic over the [`UniversalWrite`] backend `S`.
///
/// Read-write counterpart of [`super::QuantizedChunkedStorageRead`]. The backend `fs` is
/// supplied by the caller (defaulting to [`MmapFile`]) rather than hardcoded.
pub struct QuantizedChunkedStorage<S: UniversalWrite + Send + 'static = MmapFile> {
    data: ChunkedVectors<u8, S>,
}

impl<S: UniversalWrite + Send + 'static> QuantizedChunkedStorage<S> {
    pub fn new(
        fs: S::Fs,
        path: &Path,
        quantized_vector_size: usize,
        in_ram: bool,
    ) -> OperationResult<Self> {
        let advice = if in_ram {
            AdviceSetting::from(Advice::Normal)
        } else {
            AdviceSetting::Global
        };
        let data = ChunkedVectors::open(
            fs,
            path,
            quantized_vector_size,
            advice,
            Populate::from(in_ram),
        )?;
        Ok(Self { data })
    }

    pub fn populate(&self) -> OperationResult<()> {
        self.data.populate()
    }

    pub fn clear_cache(&self) -> OperationResult<()> {
        let Self { data } = self;
        data.clear_cache()
    }

    /// Returns multiple continuous vectors given a start `index` and a `count` of vectors to return.
    ///
    /// This function returns `None` if the vector is out of bounds.
    pub fn get_many<P>(&self, index: PointOffsetType, count: usize) -> Option<Cow<'_, [u8]>>
    where
        P: AccessPattern,
    {
        self.data.get_many::<P>(index as usize, count)
    }

    /// Batched counterpart of [`Self::get_many`]: invoke `callback` with the
    /// concatenated records of each `(user_data, start, count)` range, batching
    /// the underlying reads.
    pub fn for_each_many<P, U>(
        &self,
        ranges: impl Iterator<Item = (U, PointOffsetType, u32)>,
        callback: impl FnMut(U, Cow<'_, [u8]>) -> OperationResult<()>,
    ) -> OperationResult<()>
    where
        P: AccessPattern,
        U: UserData,
    {
        self.data.for_each_vector::<P, _>(ranges, callback)
    }
}

impl<S: UniversalWrite + Send + 'static> crate::quantization::EncodedStorageWrite
    for QuantizedChunkedStorage<S>
{
    fn upsert_vector(&mut self, id: PointOffsetType, vector: &[u8]) -> std::io::Result<()> {
        self.data
            .insert(id as VectorOffsetType, vector)
            .map_err(std::io::Error::other)
    }

    fn is_in_ram_or_mmap() -> bool {
        ChunkedVectors::<u8, S>::storage_kind().is_in_ram_or_mmap()
    }

    fn is_cold(&self) -> bool {
        self.data.is_cold()
    }

    fn vectors_count(&self) -> usize {
        self.data.len()
    }

    fn flusher(&self) -> Flusher {
        let flusher = self.data.flusher();
        Box::new(move || {
            Ok(flusher().map_err(|e| {
                std::io::Error::other(format!("Failed to flush quantization storage: {e}"))
            })?)
        })
    }

    fn heap_size_bytes(&self) -> usize {
        let Self { data } = self;
        data.heap_size_bytes()
    }
}

impl<S: UniversalWrite + Send + 'static> crate::quantization::EncodedStorage
    for QuantizedChunkedStorage<S>
{
    fn get_vector_data(&self, index: PointOffsetType) -> Cow<'_, [u8]> {
        self.get_vector_data_opt(index).unwrap_or_default()
    }

    fn get_vector_data_opt(&self, index: PointOffsetType) -> Option<Cow<'_, [u8]>> {
        self.data.get::<Random>(index as VectorOffsetType)
    }

    fn for_each_batch(
        &self,
        offsets: &[PointOffsetType],
        mut callback: impl FnMut(usize, Cow<'_, [u8]>),
    ) -> std::io::Result<()> {
        let offsets = offsets
            .iter()
            .enumerate()
            .map(|(index, &offset)| (index, offset, 1));

        self.data
            .for_each_vector::<Random, _>(offsets, |index, vector| {
                callback(index, vector);
                Ok(())
            })
            .map_err(std::io::Error::other)
    }

    fn for_each_run(
        &self,
        offsets: &[PointOffsetType],
        mut callback: impl FnMut(usize, usize, Cow<'_, [u8]>),
    ) -> std::io::Result<()> {
        for run in crate::quantization::encoded_storage::consecutive_runs(offsets) {
            let bytes = self
                .get_many::<Random>(run.start, run.len)
                .ok_or_else(|| run.unreadable())?;
            callback(run.first, run.len, bytes);
        }
        Ok(())
    }

    fn files(&self) -> Vec<PathBuf> {
        self.data.files()
    }

    fn immutable_files(&self) -> Vec<PathBuf> {
        self.data.immutable_files()
    }
}

pub struct QuantizedChunkedStorageBuilder<S: UniversalWrite + Send + 'static = MmapFile> {
    data: ChunkedVectors<u8, S>,
}

impl<S: UniversalWrite + Send + 'static> QuantizedChunkedStorageBuilder<S> {
    pub fn new(
        fs: S::Fs,
        path: &Path,
        quantized_vector_size: usize,
        in_ram: bool,
    ) -> OperationResult<Self> {
        let advice = if in_ram {
            AdviceSetting::from(Advice::Normal)
        } else {
            AdviceSetting::Global
        };
        let data = ChunkedVectors::open(
            fs,
            path,
            quantized_vector_size,
            advice,
            Populate::from(in_ram),
        )?;
        Ok(Self { data })
    }
}

impl<S: UniversalWrite + Send + 'static> crate::quantization::EncodedStorageBuilder
    for QuantizedChunkedStorageBuilder<S>
{
    type Storage = QuantizedChunkedStorage<S>;
    type Error = std::io::Error;

    fn build(self) -> std::io::Result<QuantizedChunkedStorage<S>> {
        let Self { data } = self;

        data.flusher()().map_err(|e| {
            std::io::Error::other(format!("Failed to flush quantization storage: {e}"))
        })?;

        Ok(QuantizedChunkedStorage { data })
    }

    fn push_vector_data(&mut self, other: &[u8]) -> std::io::Result<()> {
        ambient::unmeasured(reason("Internal operation"), || self.data.push(other))
            .map(|_| ())
            .map_err(|e| std::io::Error::other(format!("Failed to push vector data: {e}")))
    }
}
