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

/// `rows` as a table: the first `left_columns` columns left-aligned, the others (numbers)
/// right-aligned, each as wide as its widest cell, two spaces apart, no trailing spaces.
pub(crate) fn table(rows: &[Vec<String>], left_columns: usize) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, cell)| {
                if c < left_columns {
                    left(cell, widths[c])
                } else {
                    right(cell, widths[c])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
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

    #[test]
    fn a_table_aligns_its_first_columns_left_and_the_rest_right() {
        let rows = vec![
            vec!["a".to_string(), "bb".to_string(), "1".to_string()],
            vec![
                "ccc".to_string(),
                "d".to_string(),
                "22".to_string(),
                "x".to_string(),
            ],
        ];
        assert_eq!(table(&rows, 1), "a    bb   1\nccc   d  22  x\n");
        assert_eq!(table(&rows, 2), "a    bb   1\nccc  d   22  x\n");
    }
}
