//! The optimiser's state (Adam's moments and step counts, SGD's momentum) as bytes, so
//! that a resumed training run continues where it stopped instead of restarting the
//! optimiser from zero.
//!
//! burn keys an optimiser's state by parameter id, and ids are drawn afresh whenever a
//! network is built, so a saved state would match nothing in the network rebuilt from a
//! weight file. The bytes therefore carry each parameter's path (its tensor name in the
//! weight file) with the id the state was saved under, and loading gives the rebuilt
//! network's parameters those ids back before handing the state to burn.
//!
//! Layout: `TABULA-OPTIM-1\n`, the JSON length as a little-endian `u64`, a JSON object
//! `{"kind": "adam", "ids": {path: id}}`, then burn's burnpack bytes.

use std::collections::BTreeMap;

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param, ParamId};
use burn::optim::{ModuleOptimizer, OptimizerRecord};
use burn::tensor::{Bytes, Tensor};
use serde::{Deserialize, Serialize};

use crate::model::PolicyValueNet;
use crate::train::OptimizerKind;
use crate::NnError;

const MAGIC: &[u8] = b"TABULA-OPTIM-1\n";

#[derive(Serialize, Deserialize)]
struct Header {
    kind: OptimizerKind,
    ids: BTreeMap<String, u64>,
}

/// Every parameter's path and id, in visiting order.
fn param_ids(model: &PolicyValueNet) -> BTreeMap<String, u64> {
    struct Ids {
        path: Vec<String>,
        out: BTreeMap<String, u64>,
    }
    impl ModuleVisitor for Ids {
        fn enter_module(&mut self, name: &str, _container: &str) {
            self.path.push(name.to_string());
        }
        fn exit_module(&mut self, _name: &str, _container: &str) {
            self.path.pop();
        }
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            self.out.insert(self.path.join("."), param.id.val());
        }
    }
    let mut ids = Ids {
        path: Vec::new(),
        out: BTreeMap::new(),
    };
    model.visit(&mut ids);
    ids.out
}

/// The optimiser's state for `model`, as bytes.
pub(crate) fn save(
    kind: OptimizerKind,
    model: &PolicyValueNet,
    optimizer: &ModuleOptimizer,
) -> Result<Vec<u8>, NnError> {
    let header = Header {
        kind,
        ids: param_ids(model),
    };
    let json = serde_json::to_vec(&header).map_err(|e| NnError::Mismatch(e.to_string()))?;
    let record = optimizer
        .to_record()
        .into_bytes()
        .map_err(|e| NnError::Mismatch(format!("optimiser state: {e}")))?;
    let mut out = Vec::with_capacity(MAGIC.len() + 8 + json.len() + record.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(json.len() as u64).to_le_bytes());
    out.extend_from_slice(&json);
    out.extend_from_slice(&record);
    Ok(out)
}

/// A saved state, checked against a network: its parameter ids and burn's record.
pub(crate) struct Loaded {
    ids: BTreeMap<String, u64>,
    record: OptimizerRecord,
}

/// Reads `bytes` as an optimiser state of kind `kind` for `model`, or says why not.
pub(crate) fn read(
    bytes: &[u8],
    kind: OptimizerKind,
    model: &PolicyValueNet,
) -> Result<Loaded, NnError> {
    let bad = |why: &str| NnError::Mismatch(format!("optimiser state: {why}"));
    let rest = bytes
        .strip_prefix(MAGIC)
        .ok_or_else(|| bad("not a Tabula optimiser state"))?;
    let (len, rest) = rest.split_at_checked(8).ok_or_else(|| bad("truncated"))?;
    let len = u64::from_le_bytes(len.try_into().map_err(|_| bad("truncated"))?);
    let len = usize::try_from(len).map_err(|_| bad("truncated"))?;
    let (json, record) = rest.split_at_checked(len).ok_or_else(|| bad("truncated"))?;
    let header: Header =
        serde_json::from_slice(json).map_err(|e| bad(&format!("bad header: {e}")))?;
    if header.kind != kind {
        return Err(bad(&format!(
            "saved for {:?}, the run trains with {kind:?}",
            header.kind
        )));
    }
    if !param_ids(model).keys().eq(header.ids.keys()) {
        return Err(bad("its parameters are not this network's"));
    }
    let record = OptimizerRecord::from_bytes(Bytes::from_bytes_vec(record.to_vec()))
        .map_err(|e| bad(&e.to_string()))?;
    Ok(Loaded {
        ids: header.ids,
        record,
    })
}

/// `model` with the saved parameter ids, and `fresh` (a new optimiser of the saved
/// kind) holding the saved state.
pub(crate) fn apply(
    loaded: Loaded,
    model: PolicyValueNet,
    fresh: ModuleOptimizer,
) -> (PolicyValueNet, ModuleOptimizer) {
    let Loaded { ids, record } = loaded;
    struct SetIds<'a> {
        path: Vec<String>,
        ids: &'a BTreeMap<String, u64>,
    }
    impl ModuleMapper for SetIds<'_> {
        fn enter_module(&mut self, name: &str, _container: &str) {
            self.path.push(name.to_string());
        }
        fn exit_module(&mut self, _name: &str, _container: &str) {
            self.path.pop();
        }
        fn map_float<const D: usize>(&mut self, mut param: Param<Tensor<D>>) -> Param<Tensor<D>> {
            if let Some(&id) = self.ids.get(&self.path.join(".")) {
                param.id = ParamId::from(id);
            }
            param
        }
    }
    let model = model.map(&mut SetIds {
        path: Vec::new(),
        ids: &ids,
    });
    (model, fresh.load_record(record))
}
