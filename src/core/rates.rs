//! Failure rates of a repeated reproduction (issue 31): how often it failed,
//! with a 95% interval, and whether a later rate is significantly lower than
//! an earlier one (a one-sided exact binomial test against the earlier
//! rate). A flaky bug is not fixed by one lucky run.

use serde::{Deserialize, Serialize};

/// The significance a post-fix rate must reach.
pub const SIGNIFICANCE: f64 = 0.01;
/// z for a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// Attempts of a reproduction and how many of them failed.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub struct Attempts {
    pub failed: u64,
    pub total: u64,
}

impl Attempts {
    pub fn add(&mut self, failed: bool) {
        self.total += 1;
        self.failed += u64::from(failed);
    }

    pub fn rate(self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.failed as f64 / self.total as f64
        }
    }

    /// Failed some of the time: neither never nor always, over 2 or more.
    pub fn is_flaky(self) -> bool {
        self.total >= 2 && self.failed > 0 && self.failed < self.total
    }

    /// The Wilson score interval of the rate at 95%.
    pub fn interval(self) -> (f64, f64) {
        if self.total == 0 {
            return (0.0, 1.0);
        }
        let n = self.total as f64;
        let p = self.rate();
        let z2 = Z95 * Z95;
        let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
        let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / (1.0 + z2 / n);
        ((centre - half).max(0.0), (centre + half).min(1.0))
    }

    /// `failed 7 of 20 (35%, 95% interval 18%-57%)`.
    pub fn describe(self) -> String {
        let (low, high) = self.interval();
        format!(
            "failed {} of {} ({}, 95% interval {}-{})",
            self.failed,
            self.total,
            percent(self.rate()),
            percent(low),
            percent(high)
        )
    }
}

fn percent(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// The one-sided p-value of seeing `after.failed` or fewer failures in
/// `after.total` attempts if the failure rate were still `before`'s: small
/// means the rate went down.
pub fn p_lower(before: Attempts, after: Attempts) -> f64 {
    let p0 = before.rate();
    if after.total == 0 {
        return 1.0;
    }
    if p0 >= 1.0 {
        return if after.failed < after.total { 0.0 } else { 1.0 };
    }
    let n = after.total;
    // Sum of binomial terms up to `failed`, each from the last by a ratio,
    // in logs so 10 000 attempts do not underflow on the way.
    let (ln_p, ln_q) = (p0.ln(), (1.0 - p0).ln());
    let mut ln_term = n as f64 * ln_q; // x = 0
    let mut sum = ln_term.exp();
    for x in 0..after.failed.min(n) {
        ln_term += ((n - x) as f64).ln() - ((x + 1) as f64).ln() + ln_p - ln_q;
        sum += ln_term.exp();
    }
    sum.min(1.0)
}

/// Attempts in a row without a failure that would be significantly better
/// than `before`'s rate.
pub fn clean_attempts_needed(before: Attempts) -> u64 {
    let p0 = before.rate();
    if p0 <= 0.0 {
        return u64::MAX;
    }
    if p0 >= 1.0 {
        return 1;
    }
    (SIGNIFICANCE.ln() / (1.0 - p0).ln()).floor() as u64 + 1
}

/// What Mark fixed rests on for a bug whose reproduction failed some of the
/// time: the rate before the fix and the attempts since.
#[derive(Debug, Clone, PartialEq)]
pub enum FixEvidence {
    /// No round's reproduction failed only some of the time.
    NotFlaky,
    /// The attempts since are significantly better (`p` < 0.01).
    Significant {
        before: Attempts,
        after: Attempts,
        p: f64,
    },
    /// Not (yet) significantly better.
    Insufficient {
        before: Attempts,
        after: Attempts,
        p: f64,
        needed: u64,
    },
}

/// Judges the attempts since the fix against the flaky rate before it.
pub fn fix_evidence(before: Option<Attempts>, after: Attempts) -> FixEvidence {
    let Some(before) = before.filter(|b| b.is_flaky()) else {
        return FixEvidence::NotFlaky;
    };
    let p = p_lower(before, after);
    if p < SIGNIFICANCE {
        FixEvidence::Significant { before, after, p }
    } else {
        FixEvidence::Insufficient {
            before,
            after,
            p,
            needed: clean_attempts_needed(before),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn attempts(failed: u64, total: u64) -> Attempts {
        Attempts { failed, total }
    }

    #[test]
    fn the_issues_example_zero_of_eleven_after_thirty_five_percent() {
        let before = attempts(7, 20);
        assert_eq!(
            before.describe(),
            "failed 7 of 20 (35%, 95% interval 18%-57%)"
        );
        let p = p_lower(before, attempts(0, 11));
        assert!(
            (p - 0.65f64.powi(11)).abs() < 1e-12 && p < SIGNIFICANCE,
            "{p}"
        );
        assert_eq!(clean_attempts_needed(before), 11);
        // One lucky run proves nothing.
        assert!(matches!(
            fix_evidence(Some(before), attempts(0, 1)),
            FixEvidence::Insufficient { needed: 11, .. }
        ));
        assert!(matches!(
            fix_evidence(Some(before), attempts(0, 11)),
            FixEvidence::Significant { .. }
        ));
        // One failure in 11 is not better enough.
        assert!(p_lower(before, attempts(1, 11)) > SIGNIFICANCE);
        // Always or never failing is not flaky: nothing to gate.
        assert_eq!(
            fix_evidence(Some(attempts(1, 1)), attempts(0, 1)),
            FixEvidence::NotFlaky
        );
        assert_eq!(fix_evidence(None, attempts(0, 0)), FixEvidence::NotFlaky);
    }

    proptest! {
        #[test]
        fn p_is_a_probability_that_grows_with_failures(
            before_failed in 1u64..50, before_extra in 1u64..50, total in 1u64..200, failed in 0u64..200,
        ) {
            let before = attempts(before_failed, before_failed + before_extra);
            let failed = failed.min(total);
            let p = p_lower(before, attempts(failed, total));
            prop_assert!((0.0..=1.0).contains(&p));
            if failed < total {
                prop_assert!(p <= p_lower(before, attempts(failed + 1, total)) + 1e-12);
            }
            let (low, high) = attempts(failed, total).interval();
            let rate = failed as f64 / total as f64;
            prop_assert!(low <= rate + 1e-12 && rate <= high + 1e-12 && 0.0 <= low && high <= 1.0);
        }
    }
}
