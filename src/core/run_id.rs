//! Run ids: `r<round>-<base36 millis>`. They sort by round, then by stamp, so a
//! listing of run logs reads in the order the runs happened.

use std::cmp::Ordering;

pub fn run_id(round: u32, now_ms: u64) -> String {
    format!("r{round}-{}", base36(now_ms))
}

fn base36(mut value: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(value % 36) as usize]);
        value /= 36;
        if value == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// Splits a run id into its round and stamp; None for anything else.
pub fn parse_run_id(id: &str) -> Option<(u32, u64)> {
    let rest = id.strip_prefix('r')?;
    let (round, stamp) = rest.split_once('-')?;
    let round = round.parse().ok()?;
    let stamp = u64::from_str_radix(stamp, 36).ok()?;
    Some((round, stamp))
}

/// Orders by round then stamp; ids that do not parse sort after those that do,
/// by plain text, so the order is total.
pub fn compare_run_ids(a: &str, b: &str) -> Ordering {
    match (parse_run_id(a), parse_run_id(b)) {
        (Some(x), Some(y)) => x.cmp(&y).then_with(|| a.cmp(b)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn formats_round_and_base36_stamp() {
        assert_eq!(run_id(1, 0), "r1-0");
        assert_eq!(run_id(3, 35), "r3-z");
        assert_eq!(run_id(12, 1_764_000_000_000), "r12-midc1z40");
    }

    #[test]
    fn orders_by_round_before_stamp() {
        let mut ids = vec![
            run_id(10, 1),
            run_id(2, 999_999),
            run_id(2, 5),
            "junk".into(),
        ];
        ids.sort_by(|a, b| compare_run_ids(a, b));
        assert_eq!(ids, vec!["r2-5", "r2-lflr", "r10-1", "junk"]);
    }

    proptest! {
        #[test]
        fn round_trips(round in 0u32.., stamp in 0u64..) {
            prop_assert_eq!(parse_run_id(&run_id(round, stamp)), Some((round, stamp)));
        }

        #[test]
        fn parse_never_panics(text in ".*") {
            let _ = parse_run_id(&text);
        }
    }
}
