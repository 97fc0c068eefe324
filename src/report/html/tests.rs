//! Tests of the page: well-formed, self-contained, escaped.
