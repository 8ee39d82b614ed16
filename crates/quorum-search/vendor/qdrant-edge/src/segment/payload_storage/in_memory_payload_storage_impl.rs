use std::collections::hash_map::Entry;
use std::path::PathBuf;

use crate::blobstore::Blob;
use crate::common::generic_consts::AccessPattern;
use crate::common::types::PointOffsetType;
use serde_json::Value;

use crate::segment::common::Flusher;
use crate::segment::common::operation_error::OperationResult;
use crate::segment::json_path::JsonPath;
use crate::segment::payload_storage::in_memory_payload_storage::InMemoryPayloadStorage;
use crate::segment::payload_storage::{PayloadStorage, PayloadStorageRead};
use crate::segment::types::{OwnedPayloadRef, Payload};

impl PayloadStorageRead for InMemoryPayloadStorage {
    fn get(&self, point_id: PointOffsetType) -> OperationResult<Payload> {
        match self.payload.get(&point_id) {
            Some(payload) => Ok(payload.to_owned()),
            None => Ok(Default::default()),
        }
    }

    fn get_sequential(&self, point_id: PointOffsetType) -> OperationResult<Payload> {
        // In memory => No optimizations available.
        self.get(point_id)
    }

    fn payload_ref(&self, point_id: PointOffsetType) -> OperationResult<OwnedPayloadRef<'_>> {
        Ok(self
            .payload_ptr(point_id)
            .map(OwnedPayloadRef::from)
            .unwrap_or_else(|| OwnedPayloadRef::from(Payload::default())))
    }

    fn iter<F>(&self, mut callback: F) -> OperationResult<()>
    where
        F: FnMut(PointOffsetType, &Payload) -> OperationResult<bool>,
    {
        let mut points: Vec<_> = self.payload.iter().collect();
        points.sort_unstable_by_key(|&(&point_id, _)| point_id);
        for (key, val) in points {
            let do_continue = callback(*key, val)?;
            if !do_continue {
                return Ok(());
            }
        }
        Ok(())
    }

    fn read_payloads<P: AccessPattern, U: crate::common::universal_io::UserData>(
        &self,
        point_offsets: impl Iterator<Item = (U, PointOffsetType)>,
        mut callback: impl FnMut(U, Payload) -> OperationResult<()>,
    ) -> OperationResult<()> {
        for (user_data, point_offset) in point_offsets {
            let payload = self.get(point_offset)?;
            callback(user_data, payload)?;
        }

        Ok(())
    }

    fn read_payloads_raw<P: AccessPattern, U: crate::common::universal_io::UserData>(
        &self,
        point_offsets: impl Iterator<Item = (U, PointOffsetType)>,
        mut callback: impl FnMut(U, Option<&[u8]>) -> OperationResult<()>,
    ) -> OperationResult<()> {
        for (user_data, point_offset) in point_offsets {
            let encoded = self.payload.get(&point_offset).map(Blob::to_bytes);
            callback(user_data, encoded.as_deref())?;
        }

        Ok(())
    }

    fn get_storage_size_bytes(&self) -> OperationResult<usize> {
        let mut estimated_size = 0;
        for (_p_id, val) in &self.payload {
            // account for point_id
            estimated_size += size_of::<PointOffsetType>();
            for (key, val) in val.0.iter() {
                // account for key and value
                estimated_size += key.len() + serde_json::to_string(val).unwrap().len()
            }
        }
        Ok(estimated_size)
    }

    fn is_cold(&self) -> bool {
        false
    }
}

impl PayloadStorage for InMemoryPayloadStorage {
    fn overwrite(&mut self, point_id: PointOffsetType, payload: &Payload) -> OperationResult<()> {
        self.payload.insert(point_id, payload.to_owned());
        Ok(())
    }

    fn set(&mut self, point_id: PointOffsetType, payload: &Payload) -> OperationResult<()> {
        match self.payload.entry(point_id) {
            Entry::Occupied(mut e) => e.get_mut().merge(payload),
            Entry::Vacant(e) => {
                e.insert(payload.to_owned());
            }
        }
        Ok(())
    }

    fn set_by_key(
        &mut self,
        point_id: PointOffsetType,
        payload: &Payload,
        key: &JsonPath,
    ) -> OperationResult<()> {
        match self.payload.entry(point_id) {
            Entry::Occupied(mut e) => e.get_mut().merge_by_key(payload, key),
            Entry::Vacant(e) => {
                let mut dest_payload = Payload::default();
                dest_payload.merge_by_key(payload, key);
                e.insert(dest_payload);
            }
        }
        Ok(())
    }

    fn delete(&mut self, point_id: PointOffsetType, key: &JsonPath) -> OperationResult<Vec<Value>> {
        match self.payload.get_mut(&point_id) {
            Some(payload) => {
                let res = payload.remove(key);
                Ok(res)
            }
            None => Ok(vec![]),
        }
    }

    fn clear(&mut self, point_id: PointOffsetType) -> OperationResult<Option<Payload>> {
        let res = self.payload.remove(&point_id);
        Ok(res)
    }

    #[cfg(test)]
    fn clear_all(&mut self) -> OperationResult<()> {
        self.payload = ahash::AHashMap::new();
        Ok(())
    }

    fn flusher(&self) -> Flusher {
        Box::new(|| Ok(()))
    }

    fn files(&self) -> Vec<PathBuf> {
        vec![]
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use serde_json::json;

    use super::*;
    use crate::segment::common::utils::IndexesMap;
    use crate::segment::fixtures::payload_context_fixture::create_id_tracker_fixture;
    use crate::segment::payload_storage::query_checker::check_payload;
    use crate::segment::types::{Condition, FieldCondition, Filter, OwnedPayloadRef};

    #[test]
    fn test_condition_checking() {
        let id_tracker = create_id_tracker_fixture(1);
        let get_payload = || {
            let payload: Payload = serde_json::from_value(json!({
                "name": "John Doe",
                "age": 43,
                "boolean": "true",
                "floating": 30.5,
                "string_array": ["hello", "world"],
                "boolean_array": ["true", "false"],
                "float_array": [1.0, 2.0],
            }))
            .unwrap();
            eprintln!("assigning payload"); // should occur only once
            payload
        };

        let query = Filter {
            should: None,
            min_should: None,
            must: Some(vec![
                Condition::Field(FieldCondition::new_match(JsonPath::new("age"), 43.into())),
                Condition::Field(FieldCondition::new_match(
                    JsonPath::new("name"),
                    "John Doe".to_string().into(),
                )),
            ]),
            must_not: None,
        };

        // Example:
        // How to check for payload in case if Payload is stored on disk
        // and it is preferred to only load the Payload once and if it is strictly required.

        let payload: RefCell<Option<OwnedPayloadRef>> = RefCell::new(None);
        check_payload(
            Box::new(|| {
                eprintln!("request payload");
                if payload.borrow().is_none() {
                    payload.replace(Some(get_payload().into()));
                }
                payload.borrow().as_ref().cloned().unwrap()
            }),
            Some(&id_tracker),
            &std::collections::HashMap::new(),
            &query,
            0,
            &IndexesMap::new(),
        );
    }

    #[test]
    fn test_read_payloads_raw_encodes_on_the_fly() {
        let mut storage = InMemoryPayloadStorage::default();
        let payload: Payload = serde_json::from_str(r#"{"name": "John Doe"}"#).unwrap();

        storage.set(1, &payload).unwrap();

        let mut read = Vec::new();
        storage
            .read_payloads_raw::<crate::common::generic_consts::Random, _>(
                [((), 1), ((), 2)].into_iter(),
                |(), payload| {
                    read.push(payload.map(<[u8]>::to_vec));
                    Ok(())
                },
            )
            .unwrap();

        assert_eq!(
            read,
            // Point 2 has no payload at all
            [Some(payload.to_bytes()), None],
        );
    }

    #[test]
    fn test_wipe() {
        let mut storage = InMemoryPayloadStorage::default();
        let payload: Payload = serde_json::from_str(r#"{"name": "John Doe"}"#).unwrap();

        storage.set(100, &payload).unwrap();
        storage.clear_all().unwrap();
        storage.set(100, &payload).unwrap();
        storage.clear_all().unwrap();
        storage.set(100, &payload).unwrap();
        assert!(!storage.get(100).unwrap().is_empty());
        storage.clear_all().unwrap();
    }

    #[test]
    fn test_assign_payload_from_serde_json() {
        let data = r#"
        {
            "name": "John Doe",
            "age": 43,
            "boolean": "true",
            "floating": 30.5,
            "string_array": ["hello", "world"],
            "boolean_array": ["true", "false"],
            "float_array": [1.0, 2.0],
            "integer_array": [1, 2],
            "geo_data": {"type": "geo", "value": {"lon": 1.0, "lat": 1.0}},
            "metadata": {
                "height": 50,
                "width": 60,
                "temperature": 60.5,
                "nested": {
                    "feature": 30.5
                },
                "integer_array": [1, 2]
            }
        }"#;

        let payload: Payload = serde_json::from_str(data).unwrap();
        let mut storage = InMemoryPayloadStorage::default();
        storage.set(100, &payload).unwrap();
        let pload = storage.get(100).unwrap();
        assert_eq!(pload, payload);
    }
}
