//! Chained greedy decoding: a step's argmax is written where the next step's embedding
//! reads its token (the token-id buffer), and copied into one of `CHAINED_STEPS` small
//! mappable buffers to be read later, so the host records and submits steps t+1, t+2
//! while the device still runs step t. Still one submission and 4 bytes read back per
//! token.

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
        let slot = self.chain.in_flight.back().map_or(0, |f| (f.slot + 1) % CHAINED_STEPS);
        // The id lands in the first word of the token-id buffer either way.
        let (buf, cols) = (self.act(x).buf, self.act(x).cols);
        self.record_argmax(buf, cols, 1, self.tokens)?;
        let read = self.chain.read[slot].clone();
        let submission = self.submit_into(Some((self.tokens, 4, read.clone())));
        let mapped = readback::map_read(&read, 4);
        self.chain.in_flight.push_back(InFlight { slot, submission, mapped, stale: false });
        Ok(())
    }

    /// The next one-row batch takes its token from the device (`chain_submit`).
    pub(crate) fn chain_begin(&mut self, start_pos: usize) -> Result<()> {
        self.flush_pending();
        if self.encoder.is_some() {
            self.submit(None);
        }
        self.n_tokens = 1;
        self.start_pos = start_pos;
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
