//! BM25 over the text index of a payload field, as a shard runs it.

use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::common::ambient;
use crate::common::types::ScoreType;
use crate::segment::common::operation_error::{OperationError, OperationResult};
use crate::segment::data_types::query_context::QueryContext;
use crate::segment::index::field_index::full_text_index::Bm25Params;
use crate::segment::index::field_index::full_text_index::tokenizers::Tokenizer;
use crate::segment::json_path::JsonPath;
use crate::segment::types::{
    Filter, PayloadFieldSchema, PayloadSchemaParams, ScoredPoint, WithPayloadInterface, WithVector,
};
use serde::Serialize;

use crate::shard::operation_rate_cost;
use crate::shard::payload_index_schema::PayloadIndexSchema;

/// A BM25 query: raw text scored against the text index of one payload field.
///
/// It carries the text, not tokens: each shard tokenizes it with the field's
/// own tokenizer, the one that built the vocabulary the terms are looked up in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TextScoringQuery {
    pub field: JsonPath,
    pub text: String,
    pub params: Bm25Params,
}

impl Hash for TextScoringQuery {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let Self {
            field,
            text,
            params: Bm25Params { k1, b },
        } = self;
        field.hash(state);
        text.hash(state);
        k1.to_bits().hash(state);
        b.to_bits().hash(state);
    }
}

/// A BM25 leaf of a planned query: one text query run against every segment
/// of the shard, as a search leaf is for a vector query.
#[derive(Debug, Clone, PartialEq)]
pub struct TextSearchRequestInternal {
    pub query: TextScoringQuery,
    pub filter: Option<Filter>,
    /// The `idf` corpus of the request's search params: the points the text
    /// statistics are gathered over, independent of `filter`. `None` gathers
    /// them over every point.
    pub idf_corpus: Option<Filter>,
    pub limit: usize,
    /// Keep only points scoring above this.
    pub score_threshold: Option<ScoreType>,
    pub with_vector: WithVector,
    pub with_payload: WithPayloadInterface,
}

impl TextSearchRequestInternal {
    /// Priced like a scroll: a base cost plus the filter's.
    pub fn text_rate_cost(&self) -> usize {
        let mut cost = operation_rate_cost::BASE_COST;
        if let Some(filter) = &self.filter {
            cost += operation_rate_cost::filter_rate_cost(filter);
        }
        cost
    }
}

impl TextScoringQuery {
    /// The query terms, tokenized as the field's text index tokenizes a
    /// ranking query. A field the schema holds no text index for is an error:
    /// there is nothing to score it with.
    pub fn tokenize(&self, schema: &PayloadIndexSchema) -> OperationResult<Vec<String>> {
        self.tokenize_field(schema.schema.get(&self.field))
    }

    /// Like [`tokenize`](Self::tokenize), given the schema of the field
    /// alone, `None` when the field has no index.
    pub fn tokenize_field(
        &self,
        field_schema: Option<&PayloadFieldSchema>,
    ) -> OperationResult<Vec<String>> {
        let field_schema = field_schema.ok_or_else(|| {
            OperationError::validation_error(format!(
                "BM25 requires a text index on field {}, which has none",
                self.field,
            ))
        })?;
        let PayloadSchemaParams::Text(params) = field_schema.expand().into_owned() else {
            return Err(OperationError::validation_error(format!(
                "BM25 requires a text index on field {}, which is indexed as {:?}",
                self.field,
                field_schema.kind(),
            )));
        };
        let tokenizer = Tokenizer::new_from_text_index_params(&params);
        let mut terms = Vec::new();
        tokenizer.tokenize_ranking_query(&self.text, |token| terms.push(token.into_owned()));
        Ok(terms)
    }
}

/// Keep only the points scoring above `score_threshold`, from a list sorted
/// best first. Strict, as the threshold of a search over a larger-is-better
/// distance.
pub fn cut_at_threshold(points: &mut Vec<ScoredPoint>, score_threshold: Option<ScoreType>) {
    if let Some(threshold) = score_threshold {
        let keep = points.partition_point(|point| point.score > threshold);
        points.truncate(keep);
    }
}

/// A query context seeded with the text statistics of `field` for `terms`
/// over `idf_corpus` (every point when `None`), ready to be filled over the
/// shard's segments by
/// [`fill_segment_query_context`](super::query_context::fill_segment_query_context).
pub fn init_text_query_context(
    field: &JsonPath,
    idf_corpus: Option<&Filter>,
    terms: &[String],
    is_stopped: Arc<AtomicBool>,
) -> QueryContext {
    // The threshold only picks between plain and indexed vector search.
    let mut query_context =
        QueryContext::new(usize::MAX, ambient::current()).with_is_stopped(is_stopped);
    query_context.init_text_stats(field, idf_corpus, terms.iter().cloned());
    query_context
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use crate::segment::data_types::index::{Language, StopwordsInterface, TextIndexParams};
    use crate::segment::types::PayloadSchemaType;

    use super::*;

    fn query(field: &str, text: &str) -> TextScoringQuery {
        TextScoringQuery {
            field: JsonPath::new(field),
            text: text.to_owned(),
            params: Bm25Params::default(),
        }
    }

    fn schema(
        fields: impl IntoIterator<Item = (&'static str, PayloadFieldSchema)>,
    ) -> PayloadIndexSchema {
        PayloadIndexSchema {
            schema: fields
                .into_iter()
                .map(|(field, schema)| (JsonPath::new(field), schema))
                .collect::<HashMap<_, _>>(),
        }
    }

    /// The query goes through the field's own tokenizer, whichever form the
    /// schema states it in: a bare type means the default parameters.
    #[test]
    fn tokenizes_with_the_field_tokenizer() {
        let schema = schema([
            (
                "bare",
                PayloadFieldSchema::FieldType(PayloadSchemaType::Text),
            ),
            (
                "english",
                PayloadFieldSchema::FieldParams(PayloadSchemaParams::Text(TextIndexParams {
                    stopwords: Some(StopwordsInterface::Language(Language::English)),
                    ..TextIndexParams::default()
                })),
            ),
        ]);
        assert_eq!(
            query("bare", "The Quick fox").tokenize(&schema).unwrap(),
            ["the", "quick", "fox"],
        );
        assert_eq!(
            query("english", "The Quick fox").tokenize(&schema).unwrap(),
            ["quick", "fox"],
        );
    }

    #[test]
    fn refuses_a_field_without_a_text_index() {
        let schema = schema([(
            "keyword",
            PayloadFieldSchema::FieldType(PayloadSchemaType::Keyword),
        )]);
        assert!(query("keyword", "fox").tokenize(&schema).is_err());
        assert!(query("missing", "fox").tokenize(&schema).is_err());
    }
}
