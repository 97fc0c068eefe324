//! Items of a run (its queries, or the queries it shares with the baseline) indexed once by slice
//! value, so that a check visits only its slice's members: with thousands of slice values, the
//! checks of a run cost the size of their slices, not checks x queries.

use std::collections::{BTreeMap, HashMap};

use crate::gate::checks::Slice;

/// `items` in their order, with the positions of each slice value's members.
pub(crate) struct SliceIndex<'a, T> {
    items: Vec<T>,
    /// field -> value -> positions in `items`.
    by_value: HashMap<&'a str, HashMap<&'a str, Vec<usize>>>,
}

impl<'a, T> SliceIndex<'a, T> {
    /// Indexes `items` by the slice values `slices_of` gives for each.
    pub(crate) fn new(
        items: Vec<T>,
        slices_of: impl Fn(&T) -> &'a BTreeMap<String, String>,
    ) -> Self {
        let mut by_value: HashMap<&'a str, HashMap<&'a str, Vec<usize>>> = HashMap::new();
        for (position, item) in items.iter().enumerate() {
            for (field, value) in slices_of(item) {
                by_value
                    .entry(field.as_str())
                    .or_default()
                    .entry(value.as_str())
                    .or_default()
                    .push(position);
            }
        }
        SliceIndex { items, by_value }
    }

    /// The members of `slice`, in the items' order.
    pub(crate) fn members<'s>(&'s self, slice: &Slice) -> Box<dyn Iterator<Item = &'s T> + 's> {
        match slice {
            Slice::All => Box::new(self.items.iter()),
            Slice::Value(v) => Box::new(
                self.by_value
                    .get(v.field.as_str())
                    .and_then(|values| values.get(v.value.as_str()))
                    .map_or(&[][..], Vec::as_slice)
                    .iter()
                    .map(|&i| &self.items[i]),
            ),
        }
    }
}
