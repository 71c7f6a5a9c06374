//! Chained greedy decoding: a step's argmax is written where the next step's embedding
//! reads its token (the token-id buffer), and copied into one of `CHAINED_STEPS` small
//! mappable buffers to be read later, so the host records and submits steps t+1, t+2
//! while the device still runs step t. Still one submission and 4 bytes read back per
//! token.
//!
//! Constrained (masked) chaining, `chain_submit_masked`: the allowed set of step t's
//! token depends on every token before it, so it is known on the host only once step
//! t-1's token has been read; the host computes it while the device runs step t's
//! forward pass. The argmax of step t then goes in its own small submission (the mask
//! written just before it, the logits masked on the device, 4 bytes read back), and step
//! t+1's forward pass, recorded ahead and held as a finished command buffer, is
//! submitted right behind it: the device goes from step t's argmax to step t+1 without
//! waiting for the host, and the token can be read as soon as the argmax has run (a
//! mapping completes with the whole submission it was copied in, so the argmax cannot
//! share step t+1's).

use std::collections::VecDeque;

use kindling_model::CHAINED_STEPS;

use super::*;
use readback::MapFuture;

/// A submitted step whose token is being read back.
struct InFlight {
    /// Which of the read buffers.
    slot: usize,
    submission: wgpu::SubmissionIndex,
    mapped: MapFuture,
    /// A plain batch began after it: nobody will ask for its token.
    stale: bool,
}

#[derive(Default)]
pub(crate) struct Chain {
    /// `CHAINED_STEPS` 4-byte read buffers, created at the first chained step.
    read: Vec<wgpu::Buffer>,
    in_flight: VecDeque<InFlight>,
}

impl Chain {
    /// Frees the read buffers (the backend is going away).
    pub(crate) fn destroy(&mut self) {
        self.in_flight.clear();
        self.read.iter().for_each(wgpu::Buffer::destroy);
    }

    /// A plain batch begins: steps still in flight belong to an abandoned decode.
    pub(crate) fn forget(&mut self) {
        self.in_flight.iter_mut().for_each(|f| f.stale = true);
    }
}

impl GpuBackend {
    /// Submits what was recorded with the argmax of row 0 of `x` left in the token-id
    /// buffer, and starts reading it back.
    pub(crate) async fn chain_submit(&mut self, x: GpuActivation) -> Result<()> {
        if let Some(e) = self.take_deferred() {
            return Err(e);
        }
        let slot = self.chain_slot().await?;
        // The id lands in the first word of the token-id buffer either way.
        let (buf, cols) = (self.act(x).buf, self.act(x).cols);
        self.record_argmax(buf, cols, 1, self.tokens)?;
        self.chain_read(slot);
        Ok(())
    }

    /// Masked chaining (see the module's docs): records the argmax of row 0 of `x` (a
    /// logit row) over the ids `mask` allows (bit `id % 32` of word `id / 32`; ids past
    /// it are not allowed), leaving it in the token-id buffer, and submits it with the
    /// mask written first; then submits what was recorded since the last submission (the
    /// next step, whose embedding reads that token), in a submission of its own.
    pub(crate) async fn chain_submit_masked(&mut self, x: GpuActivation, mask: &[u32]) -> Result<()> {
        if let Some(e) = self.take_deferred() {
            return Err(e);
        }
        // The next step, recorded before this mask was known: held back until the argmax
        // that gives its token is submitted. Its parameters stay in the blob, which the
        // argmax's submission writes. (Dropped unsubmitted if anything below fails.)
        self.flush_pending();
        let next = self.encoder.is_some().then(|| self.finish_recorded());
        let slot = self.chain_slot().await?;
        let bytes = (mask.len().max(1) * 4) as u64;
        let (words, size) = self.scratch_buffer(self.token_mask, "token mask", bytes)?;
        self.token_mask = Some((words, size));
        if !mask.is_empty() {
            self.gpu.queue.write_buffer(&self.buffers[words.0 as usize], 0, bytemuck::cast_slice(mask));
        }
        let (buf, cols) = (self.act(x).buf, self.act(x).cols);
        let p = EwParams { len: cols as u32, cols: (mask.len() * 32).min(cols) as u32, ..Default::default() };
        self.record(Op::MaskLogits, None, &[buf, words], &p, None, item_groups(cols));
        self.record_argmax(buf, cols, 1, self.tokens)?;
        self.chain_read(slot);
        if let Some(next) = next {
            self.gpu.queue.submit([next]);
            self.stats.submits += 1;
        }
        Ok(())
    }

    /// Submits what was recorded without reading anything: the prompt of a masked
    /// chained decode, which the device runs while the host computes the first mask.
    pub(crate) fn submit_recorded(&mut self) -> Result<()> {
        if let Some(e) = self.take_deferred() {
            return Err(e);
        }
        self.flush_pending();
        if self.encoder.is_some() {
            self.submit(None);
        }
        Ok(())
    }

    /// A free read buffer for the next chained step's token.
    async fn chain_slot(&mut self) -> Result<usize> {
        // Every read buffer busy: collect the oldest (an abandoned step's) first.
        while self.chain.in_flight.len() >= CHAINED_STEPS {
            self.chain_collect().await?;
        }
        if self.chain.read.is_empty() {
            for _ in 0..CHAINED_STEPS {
                self.chain.read.push(self.gpu.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("chained token"),
                    size: 4,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                }));
                self.stats.objects_created += 1;
            }
        }
        Ok(self.chain.in_flight.back().map_or(0, |f| (f.slot + 1) % CHAINED_STEPS))
    }

    /// Submits what was recorded with the token-id buffer's first word copied into read
    /// buffer `slot`, and starts reading it back.
    fn chain_read(&mut self, slot: usize) {
        let read = self.chain.read[slot].clone();
        let submission = self.submit_into(Some((self.tokens, 4, read.clone())));
        let mapped = readback::map_read(&read, 4);
        self.chain.in_flight.push_back(InFlight { slot, submission, mapped, stale: false });
    }

    /// The next one-row batch takes its token from the device (`chain_submit`).
    pub(crate) fn chain_begin(&mut self, start_pos: usize) -> Result<()> {
        self.flush_pending();
        if self.encoder.is_some() {
            self.submit(None);
        }
        self.n_tokens = 1;
        self.start_pos = start_pos;
        self.packed.clear();
        Ok(())
    }

    /// The token of the oldest chained step still wanted.
    pub(crate) async fn chain_finish(&mut self) -> Result<u32> {
        loop {
            let stale =
                self.chain.in_flight.front().map(|f| f.stale).ok_or_else(|| err("no chained decode step to read"))?;
            let id = self.chain_collect().await?;
            if !stale {
                return Ok(id);
            }
        }
    }

    /// Waits for the oldest chained step and reads its token.
    async fn chain_collect(&mut self) -> Result<u32> {
        let Some(f) = self.chain.in_flight.pop_front() else {
            return Err(err("no chained decode step to read"));
        };
        self.wait_for(Some(f.submission))?;
        let read = self.chain.read[f.slot].clone();
        let bytes = self.take_mapped(&read, 4, f.mapped.await)?;
        bytes
            .get(..4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes)
            .ok_or_else(|| err("short read of a token id"))
    }
}
