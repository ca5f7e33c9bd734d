//! Weight files: safetensors with metadata (format, version, game, architecture).
//!
//! Tensors are named by their place in [`PolicyValueNet`] (`blocks.0.first.conv.weight`,
//! `stem.bn.running_var`, …), f32, in burn's layouts (conv `[out, in, kh, kw]`, linear
//! `[in, out]`). The same file feeds training (burn) and search ([`crate::infer`]).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::tensor::{Device, Tensor, TensorData};
use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use tabula_core::Game;

use crate::arch::Architecture;
use crate::model::PolicyValueNet;
use crate::NnError;

/// The `format` metadata value of every Tabula weight file.
pub const FORMAT: &str = "tabula-net";
/// The version of the layout this code writes and reads.
pub const VERSION: u32 = 1;

/// One named tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedTensor {
    /// Its name in the model.
    pub name: String,
    /// Its shape.
    pub shape: Vec<usize>,
    /// Its values, row-major.
    pub data: Vec<f32>,
}

/// A network's weights with what they are for.
#[derive(Clone, Debug, PartialEq)]
pub struct WeightFile {
    /// The game, as the command line names it (e.g. `connect4`).
    pub game: String,
    /// The network's shape.
    pub arch: Architecture,
    /// Free-form facts (training iteration, steps, …).
    pub extra: BTreeMap<String, String>,
    /// The tensors, in the model's visiting order.
    pub tensors: Vec<NamedTensor>,
}

struct Collector {
    path: Vec<String>,
    out: Vec<NamedTensor>,
}

impl ModuleVisitor for Collector {
    fn enter_module(&mut self, name: &str, _container: &str) {
        self.path.push(name.to_string());
    }
    fn exit_module(&mut self, _name: &str, _container: &str) {
        self.path.pop();
    }
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let t = param.val();
        let shape = t.shape().dims::<D>().to_vec();
        let data = t
            .into_data()
            .convert::<f32>()
            .try_to_vec::<f32>()
            .unwrap_or_default();
        self.out.push(NamedTensor {
            name: self.path.join("."),
            shape,
            data,
        });
    }
}

struct Loader<'a> {
    path: Vec<String>,
    tensors: HashMap<&'a str, &'a NamedTensor>,
    device: Device,
    errors: Vec<String>,
    used: usize,
}

impl ModuleMapper for Loader<'_> {
    fn enter_module(&mut self, name: &str, _container: &str) {
        self.path.push(name.to_string());
    }
    fn exit_module(&mut self, _name: &str, _container: &str) {
        self.path.pop();
    }
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let name = self.path.join(".");
        let want = param.val().shape().dims::<D>().to_vec();
        match self.tensors.get(name.as_str()) {
            None => {
                self.errors.push(format!("tensor {name} is missing"));
                param
            }
            Some(t) if t.shape != want => {
                self.errors.push(format!(
                    "tensor {name} has shape {:?}, the network needs {:?}",
                    t.shape, want
                ));
                param
            }
            Some(t) => {
                self.used += 1;
                let device = self.device.clone();
                let data = TensorData::new(t.data.clone(), t.shape.clone());
                param.map(move |old| {
                    let grad = old.is_require_grad();
                    Tensor::<D>::from_data(data, &device).set_require_grad(grad)
                })
            }
        }
    }
}

/// Every float tensor of `model`, named by its place in the module tree.
pub fn collect_tensors<M: Module>(model: &M) -> Vec<NamedTensor> {
    let mut c = Collector {
        path: Vec::new(),
        out: Vec::new(),
    };
    model.visit(&mut c);
    c.out
}

/// Replaces every tensor of `model` by the one of the same name in `tensors`; a
/// missing, extra or misshapen tensor is an error.
pub fn load_tensors<M: Module>(
    model: M,
    tensors: &[NamedTensor],
    device: &Device,
) -> Result<M, NnError> {
    let mut loader = Loader {
        path: Vec::new(),
        tensors: tensors.iter().map(|t| (t.name.as_str(), t)).collect(),
        device: device.clone(),
        errors: Vec::new(),
        used: 0,
    };
    let model = model.map(&mut loader);
    if loader.used != tensors.len() && loader.errors.is_empty() {
        loader.errors.push(format!(
            "{} tensors in the file are not in the network",
            tensors.len() - loader.used
        ));
    }
    if !loader.errors.is_empty() {
        return Err(NnError::Mismatch(loader.errors.join("; ")));
    }
    Ok(model)
}

/// The tensor called `name` in `tensors`.
pub fn find_tensor<'a>(tensors: &'a [NamedTensor], name: &str) -> Result<&'a NamedTensor, NnError> {
    tensors
        .iter()
        .find(|t| t.name == name)
        .ok_or_else(|| NnError::Mismatch(format!("tensor {name} is missing")))
}

/// Safetensors bytes of `tensors` (f32) with `meta`.
pub fn serialize(
    tensors: &[NamedTensor],
    meta: HashMap<String, String>,
) -> Result<Vec<u8>, NnError> {
    let bytes: Vec<(String, Vec<u8>, Vec<usize>)> = tensors
        .iter()
        .map(|t| {
            let b = t.data.iter().flat_map(|x| x.to_le_bytes()).collect();
            (t.name.clone(), b, t.shape.clone())
        })
        .collect();
    let views = bytes
        .iter()
        .map(|(name, b, shape)| {
            TensorView::new(Dtype::F32, shape.clone(), b)
                .map(|v| (name.clone(), v))
                .map_err(|e| NnError::Architecture(format!("tensor {name}: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    safetensors::serialize(views, Some(meta))
        .map_err(|e| NnError::Architecture(format!("cannot serialise: {e}")))
}

/// The metadata of safetensors `bytes`, checked to be a Tabula file of `format` at
/// [`VERSION`].
pub fn read_metadata(bytes: &[u8], format: &str) -> Result<HashMap<String, String>, String> {
    let (_, header) =
        SafeTensors::read_metadata(bytes).map_err(|e| format!("not a safetensors file ({e})"))?;
    let meta = header.metadata().clone().unwrap_or_default();
    let get = |k: &str| meta.get(k).ok_or_else(|| format!("metadata has no {k:?}"));
    if get("format")? != format {
        return Err(format!("format is {:?}, not {format:?}", get("format")?));
    }
    let version: u32 = get("version")?
        .parse()
        .map_err(|_| "bad version".to_string())?;
    if version != VERSION {
        return Err(format!(
            "version {version}; this build reads version {VERSION}"
        ));
    }
    Ok(meta)
}

/// The f32 tensors of safetensors `bytes`; any other type or a non-finite value is
/// refused.
pub fn read_tensors(bytes: &[u8]) -> Result<Vec<NamedTensor>, String> {
    let file = SafeTensors::deserialize(bytes).map_err(|e| format!("bad tensors ({e})"))?;
    let mut tensors = Vec::new();
    for (name, view) in file.tensors() {
        if view.dtype() != Dtype::F32 {
            return Err(format!("tensor {name} is {:?}, not F32", view.dtype()));
        }
        let data: Vec<f32> = view
            .data()
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        // A NaN would pass unseen through the ReLUs (`max(0.0)` drops it) and
        // corrupt every value downstream: refuse the file instead.
        if let Some(i) = data.iter().position(|v| !v.is_finite()) {
            return Err(format!(
                "tensor {name} holds a non-finite value ({}) at index {i}",
                data[i]
            ));
        }
        tensors.push(NamedTensor {
            name,
            shape: view.shape().to_vec(),
            data,
        });
    }
    Ok(tensors)
}

/// The metadata of a file: its free-form `extra` entries, the [`VERSION`], then the
/// `fixed` ones (`format` among them), which win over an extra entry of the same name.
pub(crate) fn metadata<const N: usize>(
    extra: &BTreeMap<String, String>,
    fixed: [(&str, String); N],
) -> HashMap<String, String> {
    let mut meta: HashMap<String, String> =
        extra.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    meta.insert("version".to_string(), VERSION.to_string());
    for (k, v) in fixed {
        meta.insert(k.to_string(), v);
    }
    meta
}

/// The entries of `meta` other than `format`, `version` and the `reserved` ones.
pub(crate) fn extra_entries(
    meta: &HashMap<String, String>,
    reserved: &[&str],
) -> BTreeMap<String, String> {
    meta.iter()
        .filter(|(k, _)| {
            !["format", "version"].contains(&k.as_str()) && !reserved.contains(&k.as_str())
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Overwrites `tensors` with random values (batch-norm variances in 0.5..2, everything
/// else in -0.3..0.3), so that tests exercise every weight and the batch-norm folding.
#[cfg(test)]
pub(crate) fn randomise(tensors: &mut [NamedTensor], seed: u64) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    for t in tensors {
        let var = t.name.ends_with("running_var");
        for x in &mut t.data {
            *x = if var {
                rng.random_range(0.5..2.0)
            } else {
                rng.random_range(-0.3..0.3)
            };
        }
    }
}

/// Reads a whole file, naming it in the error.
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>, NnError> {
    std::fs::read(path).map_err(|source| NnError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Writes `bytes` atomically (a temporary file renamed over `path`).
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), NnError> {
    let io = |source| NnError::Io {
        path: path.display().to_string(),
        source,
    };
    let tmp = path.with_extension("safetensors.tmp");
    std::fs::write(&tmp, bytes).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

impl WeightFile {
    /// The weights of `model`, a network of shape `arch` for `game`.
    pub fn from_model(model: &PolicyValueNet, arch: &Architecture, game: &str) -> WeightFile {
        WeightFile {
            game: game.to_string(),
            arch: arch.clone(),
            extra: BTreeMap::new(),
            tensors: collect_tensors(model),
        }
    }

    /// The weights of a freshly initialised network (burn's initialisers, seeded) — an
    /// untrained player, or the start of a training run. Made on the CPU whatever the
    /// training device: an untrained player must not start a GPU.
    pub fn initial(arch: &Architecture, game: &str, seed: u64) -> WeightFile {
        let device = Device::flex();
        device.seed(seed);
        WeightFile::from_model(&PolicyValueNet::new(arch, &device), arch, game)
    }

    /// A burn model on `device` holding these weights.
    pub fn to_model(&self, device: &Device) -> Result<PolicyValueNet, NnError> {
        // The model is allocated from the architecture the file states: check first
        // that its tensors are that architecture, so that a file claiming a huge
        // network is refused instead of exhausting memory.
        crate::infer::Network::from_weights(self)?;
        let model = PolicyValueNet::new(&self.arch, device);
        self.load_into(model, device)
    }

    /// Replaces every tensor of `model` by the one of the same name in this file.
    pub fn load_into(
        &self,
        model: PolicyValueNet,
        device: &Device,
    ) -> Result<PolicyValueNet, NnError> {
        load_tensors(model, &self.tensors, device)
    }

    /// The tensor called `name`.
    pub fn tensor(&self, name: &str) -> Result<&NamedTensor, NnError> {
        find_tensor(&self.tensors, name)
    }

    /// Checks that these weights were made for `game` (same name and encoding).
    pub fn check_game<G: Game>(&self, game: &G) -> Result<(), NnError> {
        if self.game != game.name() {
            return Err(NnError::Mismatch(format!(
                "the network was trained for {}, not {}",
                self.game,
                game.name()
            )));
        }
        self.arch.check_game(game)
    }

    /// The safetensors bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, NnError> {
        let meta = metadata(
            &self.extra,
            [
                ("format", FORMAT.to_string()),
                ("game", self.game.clone()),
                (
                    "architecture",
                    serde_json::to_string(&self.arch).unwrap_or_default(),
                ),
            ],
        );
        serialize(&self.tensors, meta)
    }

    /// Writes the file atomically (a temporary file renamed over `path`).
    pub fn save(&self, path: &Path) -> Result<(), NnError> {
        write_atomically(path, &self.to_bytes()?)
    }

    /// Reads a file written by [`WeightFile::save`].
    pub fn load(path: &Path) -> Result<WeightFile, NnError> {
        Self::from_bytes(&read_file(path)?).map_err(|reason| NnError::BadFile {
            path: path.display().to_string(),
            reason,
        })
    }

    /// Parses safetensors bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<WeightFile, String> {
        let meta = read_metadata(bytes, FORMAT)?;
        let get = |k: &str| meta.get(k).ok_or_else(|| format!("metadata has no {k:?}"));
        let arch: Architecture = serde_json::from_str(get("architecture")?)
            .map_err(|e| format!("bad architecture metadata: {e}"))?;
        arch.validate()
            .map_err(|e| format!("bad architecture metadata: {e}"))?;
        let tensors = read_tensors(bytes)?;
        let extra = extra_entries(&meta, &["game", "architecture"]);
        Ok(WeightFile {
            game: get("game")?.clone(),
            arch,
            extra,
            tensors,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tabula_core::{ConnectFour, TicTacToe};

    #[test]
    fn round_trip_through_bytes_and_into_a_model() {
        let game = TicTacToe::new();
        let arch = Architecture::preset(&game, "seed").unwrap();
        let device = Device::default();
        let model = PolicyValueNet::new(&arch, &device);
        let mut file = WeightFile::from_model(&model, &arch, &game.name());
        file.extra.insert("iteration".into(), "3".into());
        assert!(
            file.tensors
                .iter()
                .any(|t| t.name == "blocks.0.first.conv.weight"),
            "{:?}",
            file.tensors.iter().map(|t| &t.name).collect::<Vec<_>>()
        );
        assert!(file.tensors.iter().any(|t| t.name == "stem.bn.running_var"));
        let back = WeightFile::from_bytes(&file.to_bytes().unwrap()).unwrap();
        assert_eq!(back.arch, arch);
        assert_eq!(back.extra.get("iteration").map(String::as_str), Some("3"));
        let mut a = file.tensors.clone();
        let mut b = back.tensors.clone();
        a.sort_by(|x, y| x.name.cmp(&y.name));
        b.sort_by(|x, y| x.name.cmp(&y.name));
        assert_eq!(a, b);
        // Into a fresh model and out again: the same numbers.
        let model2 = back.to_model(&device).unwrap();
        let again = WeightFile::from_model(&model2, &arch, &game.name());
        assert_eq!(again.tensors, file.tensors);
        back.check_game(&game).unwrap();
    }

    #[test]
    fn mismatches_are_clear_errors() {
        let ttt = TicTacToe::new();
        let arch = Architecture::preset(&ttt, "seed").unwrap();
        let model = PolicyValueNet::new(&arch, &Device::default());
        let file = WeightFile::from_model(&model, &arch, &ttt.name());
        let err = file
            .check_game(&ConnectFour::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("trained for tictactoe"), "{err}");
        let mut wrong = file.clone();
        wrong.arch.channels = 32;
        let err = wrong.to_model(&Device::default()).unwrap_err().to_string();
        assert!(err.contains("shape"), "{err}");
        let mut short = file.clone();
        short.tensors.pop();
        assert!(short
            .to_model(&Device::default())
            .unwrap_err()
            .to_string()
            .contains("missing"));
        assert!(WeightFile::from_bytes(b"not a file").is_err());
        let mut bytes = file.to_bytes().unwrap();
        bytes.truncate(bytes.len() - 10);
        assert!(WeightFile::from_bytes(&bytes).is_err());
        // an architecture whose numbers overflow (found by fuzz_weight_file_architecture)
        let mut huge = file.clone();
        huge.arch.height = usize::MAX;
        let err = WeightFile::from_bytes(&huge.to_bytes().unwrap()).unwrap_err();
        assert!(err.contains("height"), "{err}");
        // non-finite weights are refused at load
        for bad in [f32::NAN, f32::INFINITY] {
            let mut poisoned = file.clone();
            poisoned.tensors[0].data[0] = bad;
            let err = WeightFile::from_bytes(&poisoned.to_bytes().unwrap()).unwrap_err();
            assert!(err.contains("non-finite"), "{err}");
        }
    }

    mod fuzz {
        use super::*;
        use proptest::prelude::*;

        fn valid_bytes() -> Vec<u8> {
            let game = TicTacToe::new();
            let arch = Architecture::preset(&game, "seed").unwrap();
            let model = PolicyValueNet::new(&arch, &Device::default());
            WeightFile::from_model(&model, &arch, &game.name())
                .to_bytes()
                .unwrap()
        }

        fn check(bytes: &[u8]) {
            if let Ok(file) = WeightFile::from_bytes(bytes) {
                if crate::infer::Network::from_weights(&file).is_ok() {
                    let _ = file.to_model(&Device::default());
                }
            }
        }

        // Fuzzing (see `scripts/fuzz.sh`): a damaged or hostile safetensors file —
        // header length, header JSON, architecture metadata, tensor table — is refused
        // or read without a panic or an allocation the file does not justify.
        proptest! {
            #[test]
            fn fuzz_weight_file_headers(
                edits in proptest::collection::vec((0usize..4096, any::<u8>()), 0..8),
                length in prop_oneof![Just(None), any::<u64>().prop_map(Some)],
                truncate in prop_oneof![Just(None), (0usize..5000).prop_map(Some)],
            ) {
                let mut bytes = valid_bytes();
                let header = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize + 8;
                for (at, b) in edits {
                    let i = at % header;
                    bytes[i] = b;
                }
                if let Some(l) = length {
                    bytes[..8].copy_from_slice(&l.to_le_bytes());
                }
                if let Some(t) = truncate {
                    bytes.truncate(t.min(bytes.len()));
                }
                check(&bytes);
            }

            #[test]
            fn fuzz_weight_file_architecture(
                field in prop_oneof![
                    Just("planes"), Just("height"), Just("width"), Just("actions"),
                    Just("blocks"), Just("channels"), Just("policy_channels"),
                    Just("value_channels"), Just("value_hidden"),
                ],
                value in prop_oneof![Just(0u64), Just(1), Just(u32::MAX as u64), Just(u64::MAX), 0u64..100_000],
            ) {
                let game = TicTacToe::new();
                let arch = Architecture::preset(&game, "seed").unwrap();
                let model = PolicyValueNet::new(&arch, &Device::default());
                let mut file = WeightFile::from_model(&model, &arch, &game.name());
                let mut json = serde_json::to_value(&file.arch).unwrap();
                json[field] = serde_json::json!(value);
                let Ok(arch) = serde_json::from_value(json) else { return Ok(()) };
                file.arch = arch;
                check(&file.to_bytes().unwrap());
            }
        }
    }
}
