//! What the command line takes from its user, checked: standard input line by line,
//! where a line that is not UTF-8 is one bad line to report, not the end of the session
//! (a GTP game or a batch of positions goes on); and counts with their allowed ranges.

use std::io::{self, BufRead};

/// One line of input: its 1-based number and its text (`None`: not UTF-8).
pub type Line = (usize, Option<String>);

/// The lines of `reader` without their line endings; I/O errors end the iteration with
/// the error.
pub fn lines(mut reader: impl BufRead) -> impl Iterator<Item = io::Result<Line>> {
    let mut number = 0;
    let mut buf = Vec::new();
    std::iter::from_fn(move || {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) => None,
            Ok(_) => {
                number += 1;
                while matches!(buf.last(), Some(b'\n' | b'\r')) {
                    buf.pop();
                }
                Some(Ok((number, String::from_utf8(buf.clone()).ok())))
            }
            Err(e) => Some(Err(e)),
        }
    })
}

/// Largest transposition table a command accepts, in MiB (64 GiB). Below it, a table
/// the machine cannot give is an error from the allocation itself.
pub const MAX_TABLE_MB: usize = 65_536;

/// A command-line count that must lie in `lo..=hi` (clap says so, with the range, when
/// it does not).
pub fn count(lo: usize, hi: usize) -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(lo as u64..=hi as u64)
}

/// A command-line number of seconds that must be finite and lie in `lo..=hi`.
pub fn seconds(
    lo: f64,
    hi: f64,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    within(lo, hi, "seconds")
}

/// A finite number in `lo..=hi` (a search constant, say).
pub fn number(
    lo: f64,
    hi: f64,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    within(lo, hi, "a number")
}

/// A parser of finite numbers in `lo..=hi`, naming them `what` when refusing one.
fn within(
    lo: f64,
    hi: f64,
    what: &'static str,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |text: &str| match text.trim().parse::<f64>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => Err(format!("expected {what} from {lo} to {hi}, not {text:?}")),
    }
}

/// A probability in (0, 1].
pub fn probability(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number"))?;
    if v > 0.0 && v <= 1.0 {
        Ok(v)
    } else {
        Err(format!("{s} is not in (0, 1]"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_line_does_not_end_the_input() {
        let input: &[u8] = b"name\n\xff\xfe bad\r\nversion\r\nlast";
        let got: Vec<Line> = lines(input).map(|l| l.unwrap()).collect();
        assert_eq!(
            got,
            vec![
                (1, Some("name".to_string())),
                (2, None),
                (3, Some("version".to_string())),
                (4, Some("last".to_string()))
            ]
        );
    }
}
