//! Text padded into aligned columns. `format!("{cell:<width$}")` panics when the width reaches
//! 65,536 (the standard library keeps widths in 16 bits), and a cell's width can come from
//! untrusted text (a slice value, a reported metric's name, a record's status): these pad with
//! spaces to any width.

/// `cell` followed by spaces up to `width` characters.
pub(crate) fn left(cell: &str, width: usize) -> String {
    let mut out = String::with_capacity(cell.len() + width);
    out.push_str(cell);
    out.extend(std::iter::repeat_n(
        ' ',
        width.saturating_sub(cell.chars().count()),
    ));
    out
}

/// Spaces up to `width` characters, then `cell`.
pub(crate) fn right(cell: &str, width: usize) -> String {
    let mut out: String =
        std::iter::repeat_n(' ', width.saturating_sub(cell.chars().count())).collect();
    out.push_str(cell);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_padded_by_characters_to_any_width() {
        assert_eq!(left("é", 3), "é  ");
        assert_eq!(right("é", 3), "  é");
        assert_eq!(left("long", 2), "long");
        assert_eq!(right("long", 2), "long");
        let wide = left("x", 70_000);
        assert_eq!(wide.len(), 70_000);
        assert!(wide.starts_with('x'));
        assert_eq!(right("x", 70_000).len(), 70_000);
    }
}
