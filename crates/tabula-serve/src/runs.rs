//! The training dashboard's data: a run directory's metrics (`metrics.jsonl`, written
//! by `tabula train` and `tabula mines train` alike) and its configuration, read while
//! the run goes on.

use std::io::Read;
use std::path::Path;

use serde_json::{json, Value};

use crate::error::ApiError;

/// The most of a metrics file read (a run writes far less).
const MAX_METRICS_BYTES: u64 = 32 << 20;

/// Configuration files a run may have, in the order they are looked for.
const CONFIGS: [&str; 2] = ["config.toml", "automine.json"];

/// `GET /api/run?dir=DIR`: every metrics row of the run in `dir` (rows that are not
/// JSON objects, such as a line being written, are skipped) and its configuration.
pub fn metrics(dir: &Path) -> Result<Value, ApiError> {
    let path = dir.join("metrics.jsonl");
    let config = CONFIGS.iter().find_map(|name| {
        let text = std::fs::read_to_string(dir.join(name)).ok()?;
        Some(json!({"file": name, "text": text}))
    });
    let file = match std::fs::File::open(&path) {
        Ok(f) => Some(f),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(ApiError::bad(format!("{}: {e}", path.display()))),
    };
    if file.is_none() && config.is_none() {
        return Err(ApiError::NotFound(format!(
            "{} is not a training run (no metrics.jsonl, config.toml or automine.json)",
            dir.display()
        )));
    }
    let mut text = String::new();
    if let Some(f) = file {
        let mut bytes = Vec::new();
        f.take(MAX_METRICS_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|e| ApiError::bad(format!("{}: {e}", path.display())))?;
        text = String::from_utf8_lossy(&bytes).into_owned();
    }
    let rows: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(Value::is_object)
        .collect();
    Ok(json!({"dir": dir.display().to_string(), "rows": rows, "config": config}))
}
