//! The typed key of a compiled kernel: an op (its table entry in op_table.rs), the
//! weight type(s) it reads and the optional features it is compiled for. Nothing is
//! looked up by string; `name` gives each key a stable, readable name.

use kindling_gguf::GgmlType;

use crate::op_table::{Family, Module, Op};
use crate::shaders;
use crate::tuning::{has_int_units, INT_BATCH_DIGITS, INT_RUNS_STEP, INT_STAGE_MAX_K};

/// Optional shader features a variant is compiled for. The kernels run without any;
/// these select faster variants where the adapter has them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ShaderFeatures {
    /// The matmul family sums a row's lanes with subgroup operations of this fixed size
    /// (0: through workgroup memory). Native only: wgpu offers subgroups there.
    pub subgroup_size: u32,
    /// The attention and rope families keep the KV cache as f16 pairs (packed in u32,
    /// no shader-f16 needed).
    pub kv_f16: bool,
    /// The batch kernels (prefill's matmul and attention) run on cooperative matrices:
    /// shaders/matmul_coop.wgsl and attention_coop.wgsl (native only: wgpu's
    /// experimental feature; see `coop_matrix_usable`).
    pub coop_matrix: bool,
    /// The decode matvecs over integer dot products (shaders/matvec_int.wgsl) for
    /// weight types with 32-value units (`has_int_units`): of a device, the most input
    /// runs (16 values each) its workgroup memory can stage, 0 where they are switched
    /// off; of a kernel, the runs its staging holds (`KernelKey::with_int_runs`), 0 for
    /// the f32 kernels of matmul.wgsl.
    pub int_runs: u32,
    /// Of an integer-dot `matvec`: its input binding holds the runs the gate/up kernel
    /// before it wrote (`KernelKey::with_input_staged`), so it stages nothing (`int_runs` 1).
    pub int_input_staged: bool,
    /// The batch matmul (prefill's matmul_tiled) over integer dot products
    /// (shaders/matmul_int.wgsl) for weight types with 32-value units, with activations
    /// of this many signed-byte digits (QD, 1..=3; 0: the f32 kernel): of a device, the
    /// digits it runs it with (integer dot products on, no cooperative matrices, room for
    /// its staging; `tuning::INT_BATCH_DIGITS` unless `GpuOptions::int_batch_digits`
    /// says otherwise); of a kernel, whether it is that one (`with_int_batch`).
    pub int_batch: u32,
}

impl ShaderFeatures {
    /// What the matmul kernels can use on a device: subgroups when the device has them
    /// at one fixed power-of-two size; cooperative matrices where the device has the
    /// configuration the kernel is written for (`coop_matrix_usable`) and subgroups of 32
    /// (its subgroups split the tile by local invocation index).
    pub fn for_device(subgroups: bool, min_size: u32, max_size: u32, coop_matrix: bool) -> Self {
        let usable = subgroups && min_size == max_size && max_size.is_power_of_two() && (4..=128).contains(&max_size);
        let subgroup_size = if usable { max_size } else { 0 };
        ShaderFeatures { subgroup_size, coop_matrix: coop_matrix && subgroup_size == 32, ..Default::default() }
    }
}

/// Whether a device's cooperative matrix configurations include the one
/// shaders/matmul_coop.wgsl and attention_coop.wgsl use: 16 × 16 × 16, f16 inputs, f32
/// accumulator, subgroup scope (what NVIDIA's tensor cores offer through
/// VK_KHR_cooperative_matrix).
pub fn coop_matrix_usable(configs: &[wgpu::CooperativeMatrixProperties]) -> bool {
    use wgpu::CooperativeScalarType::{F16, F32};
    configs.iter().any(|c| c.m_size == 16 && c.n_size == 16 && c.k_size == 16 && c.ab_type == F16 && c.cr_type == F32)
}

/// A compiled kernel: entry point, weight type (for kernels that read weights) and
/// the feature flags of the variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelKey {
    pub op: Op,
    pub ty: Option<GgmlType>,
    /// matvec_multi's third weight's type where it differs from `ty` (v beside q and k:
    /// Q4_K_M files store v in Q6_K in half the layers).
    pub ty3: Option<GgmlType>,
    pub features: ShaderFeatures,
}

/// A shader module: family, weight type, third weight's type, features, and the op
/// where its module is its own (`Module` other than `Shared`).
pub type ModuleKey = (Family, Option<GgmlType>, Option<GgmlType>, ShaderFeatures, Option<Op>);

impl KernelKey {
    pub fn new(op: Op, ty: Option<GgmlType>) -> Self {
        KernelKey { op, ty: if op.reads_weight() { ty } else { None }, ty3: None, features: ShaderFeatures::default() }
    }

    /// The variant whose third weight is of type `t` (ops with `Forms::third_type`; the
    /// same type as the first is the plain variant).
    pub fn with_third_type(mut self, t: GgmlType) -> Self {
        if self.op.spec().forms.third_type && self.ty != Some(t) {
            self.ty3 = Some(t);
        }
        self
    }

    /// matmul_tiled over several weights side by side (`MatmulParams::multi`: a layer's
    /// q, k and v), the third of type `t`: its own variant even where `t` is the first's
    /// type, as only it has the routing compiled in (`MULTI`, shaders.rs `multi_const`).
    pub fn over_several_weights(mut self, t: GgmlType) -> Self {
        self.ty3 = Some(t);
        self
    }

    /// The integer-dot variant of a decode matvec whose input row is `k` values, where
    /// it has one (its weight types have units, `has_int_units`, rows of whole units
    /// and blocks, and `k` ≤ INT_STAGE_MAX_K); its staging holds `k` rounded up to a
    /// step of runs. `with_features` keeps it where the device stages that many.
    pub fn with_int_runs(mut self, k: usize) -> Self {
        let fits = k > 0 && k <= INT_STAGE_MAX_K;
        if self.op.spec().forms.int_dot && fits && self.int_units_fit(k) {
            self.features.int_runs = ((k / 16) as u32).next_multiple_of(INT_RUNS_STEP);
        }
        self
    }

    /// The integer-dot `matvec` whose input binding holds the input row's runs as a
    /// gate/up kernel wrote them (`MatmulParams::qx_runs`), where its weight type has
    /// units; rows of any length (it stages nothing).
    pub fn with_input_staged(mut self, k: usize) -> Self {
        if self.op.spec().forms.staged_input && k > 0 && self.int_units_fit(k) {
            // A staging of one run: the module's arrays are never touched.
            self.features.int_runs = 1;
            self.features.int_input_staged = true;
        }
        self
    }

    /// The integer-dot variant of the batch matmul for rows of `k` values, where its
    /// weight type has units (rows of whole units and blocks). `with_features` keeps it
    /// where the device runs it. (The host also needs activation rows of whole vec4s.)
    pub fn with_int_batch(mut self, k: usize) -> Self {
        if self.op.spec().forms.int_batch && k > 0 && self.int_units_fit(k) {
            self.features.int_batch = INT_BATCH_DIGITS;
        }
        self
    }

    /// Whether rows of `k` values of this kernel's weight types are whole integer-dot
    /// units (and whole blocks).
    fn int_units_fit(self, k: usize) -> bool {
        let fits = |t: GgmlType| has_int_units(t) && k.is_multiple_of(t.block_elems().max(32));
        self.ty.is_some_and(fits) && self.ty3.is_none_or(fits)
    }

    /// The variant for these features: each op keeps the ones it has forms for
    /// (`OpSpec::forms`), so the others are not compiled twice. An integer-dot variant
    /// is kept where the device stages that many runs.
    pub fn with_features(mut self, f: ShaderFeatures) -> Self {
        let forms = self.op.spec().forms;
        let int_runs = self.features.int_runs;
        let int_fits = int_runs <= f.int_runs;
        self.features = ShaderFeatures {
            subgroup_size: if forms.subgroups { f.subgroup_size } else { 0 },
            kv_f16: forms.kv_f16 && f.kv_f16,
            coop_matrix: forms.coop_matrix && f.coop_matrix,
            int_runs: if forms.int_dot && int_fits { int_runs } else { 0 },
            int_input_staged: self.features.int_input_staged && int_fits,
            // Never beside cooperative matrices: the batch kernel is one or the other.
            int_batch: if self.features.int_batch > 0 && forms.int_batch && !f.coop_matrix { f.int_batch } else { 0 },
        };
        self
    }

    /// The module a kernel lives in: entry points of one family and type share it,
    /// except those whose module is their own (`Module`).
    pub fn module_key(self) -> ModuleKey {
        let own = (self.op.spec().module != Module::Shared).then_some(self.op);
        (self.op.family(), self.ty, self.ty3, self.features, own)
    }

    /// A stable, readable name: the op, the weight type(s), then each feature the
    /// variant is compiled for (`matvec_multi/q4_k+q6_k/sg32/int128`).
    pub fn name(self) -> String {
        let mut s = self.op.name().to_string();
        if let Some(t) = self.ty {
            s += &format!("/{}", type_name(t));
        }
        if let Some(t) = self.ty3 {
            s += &format!("+{}", type_name(t));
        }
        let f = self.features;
        if f.subgroup_size > 0 {
            s += &format!("/sg{}", f.subgroup_size);
        }
        if f.kv_f16 {
            s += "/kv_f16";
        }
        if f.coop_matrix {
            s += "/coop";
        }
        if f.int_runs > 0 {
            s += &format!("/int{}", f.int_runs);
        }
        if f.int_input_staged {
            s += "/staged";
        }
        if f.int_batch > 0 {
            s += &format!("/idot{}", f.int_batch);
        }
        s
    }

    /// The WGSL module source of this kernel as this build compiles it: in a browser
    /// (the wasm build) with its marked loops counted to a constant (`browser_source`).
    pub fn source(self) -> String {
        if cfg!(target_arch = "wasm32") {
            self.browser_source()
        } else {
            shaders::assemble(self)
        }
    }

    /// The source a browser compiles: the module with the loops marked `// bounded in
    /// browsers` rewritten so that Chrome's compiler adds no iteration counters to them
    /// (loop_bounds.rs says why).
    pub fn browser_source(self) -> String {
        crate::loop_bounds::bound_loops(&shaders::assemble(self))
    }

    /// Every kernel the backend can build, for the given weight types; of the mixed
    /// matvec_multi variants, each type with the next one in `types` as its third.
    pub fn all(types: &[GgmlType]) -> Vec<KernelKey> {
        let mut keys = Vec::new();
        for op in Op::all() {
            if op.reads_weight() {
                keys.extend(types.iter().map(|&t| KernelKey::new(op, Some(t))));
            } else {
                keys.push(KernelKey::new(op, None));
            }
            if op.spec().forms.third_type && types.len() > 1 {
                let next = types.iter().cycle().skip(1);
                keys.extend(types.iter().zip(next).map(|(&t, &t3)| KernelKey::new(op, Some(t)).with_third_type(t3)));
            }
            // The integer-dot variants (one staging size; the others differ only in it),
            // the matvec that reads its input as the gate/up kernel left it, and the
            // batch matmul.
            let mine = keys.iter().filter(|k| k.op == op);
            // The integer-dot batch matmul.
            let staged = mine.clone().map(|k| k.with_input_staged(256));
            let int = mine.clone().map(|k| k.with_int_runs(256)).chain(staged);
            let int = int.filter(|k| k.features.int_runs > 0);
            let batch = mine.map(|k| k.with_int_batch(256)).filter(|k| k.features.int_batch > 0);
            let int: Vec<KernelKey> = int.chain(batch).collect();
            // An op with only its integer-dot form keeps no plain variant.
            if op.spec().forms.int_only {
                keys.retain(|k| k.op != op);
            }
            keys.extend(int);
        }
        keys
    }
}

/// The lower-case name of a weight type in kernel names (`q4_k`).
pub fn type_name(t: GgmlType) -> String {
    t.name().to_ascii_lowercase()
}
