//! Agreement of two binary raters: observed agreement, Cohen's kappa, the confusion matrix.

/// How two raters' yes/no verdicts on the same items compare.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Agreement {
    /// [a yes & b yes, a yes & b no, a no & b yes, a no & b no]
    pub confusion: [usize; 4],
    /// Share of items on which they agree.
    pub observed: f64,
    /// Cohen's kappa: (observed - expected) / (1 - expected), None when chance agreement is 1
    /// (both raters constant and equal).
    pub kappa: Option<f64>,
}

/// Agreement of the paired verdicts `(a, b)`; None for no items.
pub fn agreement(pairs: &[(bool, bool)]) -> Option<Agreement> {
    if pairs.is_empty() {
        return None;
    }
    let mut confusion = [0usize; 4];
    for &(a, b) in pairs {
        let cell = match (a, b) {
            (true, true) => 0,
            (true, false) => 1,
            (false, true) => 2,
            (false, false) => 3,
        };
        confusion[cell] += 1;
    }
    let n = pairs.len() as f64;
    let observed = (confusion[0] + confusion[3]) as f64 / n;
    let a_yes = (confusion[0] + confusion[1]) as f64 / n;
    let b_yes = (confusion[0] + confusion[2]) as f64 / n;
    let expected = a_yes * b_yes + (1.0 - a_yes) * (1.0 - b_yes);
    let kappa = (expected < 1.0).then(|| (observed - expected) / (1.0 - expected));
    Some(Agreement {
        confusion,
        observed,
        kappa,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textbook_kappa() {
        // 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no: po = 0.7, pe = 0.5*0.6 + 0.5*0.4 = 0.5, kappa 0.4
        let mut pairs = vec![(true, true); 20];
        pairs.extend(vec![(true, false); 5]);
        pairs.extend(vec![(false, true); 10]);
        pairs.extend(vec![(false, false); 15]);
        let a = agreement(&pairs).unwrap();
        assert_eq!(a.confusion, [20, 5, 10, 15]);
        assert!((a.observed - 0.7).abs() < 1e-12);
        assert!((a.kappa.unwrap() - 0.4).abs() < 1e-12);
        assert_eq!(
            agreement(&[(true, true), (true, true)]).unwrap().kappa,
            None
        );
        assert_eq!(agreement(&[]), None);
    }
}
