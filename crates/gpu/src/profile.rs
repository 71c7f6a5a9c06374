//! GPU-side time of every dispatch (`GpuOptions::profile`; native adapters with
//! timestamp queries inside passes): a timestamp is written before each dispatch and
//! at the end of the pass, so the difference of two neighbours is one dispatch's time
//! on the device (its barrier and launch included). Host recording, submission and
//! waiting are not in it, which is what tells a slow kernel from a slow host.
//!
//! Each submission is waited for and its stamps read back at once, so a profiled run
//! loses the overlap of host and device (its tok/s are not the unprofiled ones); the
//! per-dispatch figures are unaffected.

use std::collections::BTreeMap;

use kindling_model::KernelTime;

/// Stamps one submission can hold (wgpu's most per query set): dispatches past
/// `STAMPS - 1` in one submission go untimed and are counted apart.
const STAMPS: u32 = 4096;

pub(crate) struct Profiler {
    set: wgpu::QuerySet,
    /// The resolved stamps (QUERY_RESOLVE), copied into `read` (MAP_READ).
    resolved: wgpu::Buffer,
    read: wgpu::Buffer,
    /// Nanoseconds per timestamp tick.
    period_ns: f64,
    /// The kernel of each stamped dispatch of the submission being recorded.
    labels: Vec<String>,
    /// Time per kernel since the last `take`.
    totals: BTreeMap<String, KernelTime>,
    /// Dispatches recorded past the stamps' capacity since the last `take`.
    untimed: u64,
}

impl Profiler {
    pub(crate) fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Profiler {
        let bytes = STAMPS as u64 * wgpu::QUERY_SIZE as u64;
        let buffer = |label, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage,
                mapped_at_creation: false,
            })
        };
        Profiler {
            set: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("dispatch stamps"),
                ty: wgpu::QueryType::Timestamp,
                count: STAMPS,
            }),
            resolved: buffer("stamps", wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC),
            read: buffer("stamps (read)", wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST),
            period_ns: queue.get_timestamp_period() as f64,
            labels: Vec::new(),
            totals: BTreeMap::new(),
            untimed: 0,
        }
    }

    /// Stamps the start of the next dispatch, of kernel `label()`.
    pub(crate) fn before_dispatch(&mut self, pass: &mut wgpu::ComputePass<'static>, label: impl FnOnce() -> String) {
        // One stamp stays free for the end of the pass.
        if self.labels.len() as u32 + 1 >= STAMPS {
            self.untimed += 1;
            return;
        }
        pass.write_timestamp(&self.set, self.labels.len() as u32);
        self.labels.push(label());
    }

    /// Stamps the end of the pass (before it ends), closing its last dispatch.
    pub(crate) fn end_pass(&mut self, pass: &mut wgpu::ComputePass<'static>) {
        if !self.labels.is_empty() {
            pass.write_timestamp(&self.set, self.labels.len() as u32);
        }
    }

    /// Copies the submission's stamps into the readable buffer (after the pass ended).
    pub(crate) fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        if self.labels.is_empty() {
            return;
        }
        let n = self.labels.len() as u32 + 1;
        encoder.resolve_query_set(&self.set, 0..n, &self.resolved, 0);
        encoder.copy_buffer_to_buffer(&self.resolved, 0, &self.read, 0, n as u64 * wgpu::QUERY_SIZE as u64);
    }

    /// Waits for the submission just made and adds its dispatches' times (natively).
    pub(crate) fn collect(&mut self, device: &wgpu::Device) {
        let labels = std::mem::take(&mut self.labels);
        if labels.is_empty() {
            return;
        }
        let bytes = (labels.len() as u64 + 1) * wgpu::QUERY_SIZE as u64;
        let slice = self.read.slice(0..bytes);
        slice.map_async(wgpu::MapMode::Read, |_| {});
        // A failed wait or mapping leaves these dispatches out of the profile; the next
        // read of the model reports the device's error.
        if device.poll(wgpu::PollType::Wait { submission_index: None, timeout: None }).is_err() {
            return;
        }
        let Ok(view) = slice.get_mapped_range() else { return };
        let stamps: Vec<u64> =
            view.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))).collect();
        drop(view);
        self.read.unmap();
        for (label, pair) in labels.into_iter().zip(stamps.windows(2)) {
            let t =
                self.totals.entry(label.clone()).or_insert_with(|| KernelTime { kernel: label, ..Default::default() });
            t.dispatches += 1;
            t.ns += pair[1].saturating_sub(pair[0]) as f64 * self.period_ns;
        }
    }

    /// The times gathered since the last take, longest first (dispatches that went
    /// untimed under the label "untimed", with no time).
    pub(crate) fn take(&mut self) -> Vec<KernelTime> {
        let mut all: Vec<KernelTime> = std::mem::take(&mut self.totals).into_values().collect();
        all.sort_by(|a, b| b.ns.total_cmp(&a.ns));
        if self.untimed > 0 {
            all.push(KernelTime { kernel: "untimed".into(), dispatches: std::mem::take(&mut self.untimed), ns: 0.0 });
        }
        all
    }
}
