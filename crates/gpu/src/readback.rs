//! Mapping a buffer for reading as a future: natively the caller polls the device
//! until the callback has run; in a browser the callback runs from the event loop and
//! wakes the awaiting task (no blocking).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

#[derive(Default)]
struct State {
    result: Option<Result<(), wgpu::BufferAsyncError>>,
    waker: Option<Waker>,
}

/// Resolves when `map_async` has called back.
pub struct MapFuture(Arc<Mutex<State>>);

impl Future for MapFuture {
    type Output = Result<(), wgpu::BufferAsyncError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut s = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match s.result.take() {
            Some(r) => Poll::Ready(r),
            None => {
                s.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// Starts mapping `buffer[..bytes]` for reading.
pub fn map_read(buffer: &wgpu::Buffer, bytes: u64) -> MapFuture {
    let state = Arc::new(Mutex::new(State::default()));
    let cb = state.clone();
    buffer.map_async(wgpu::MapMode::Read, 0..bytes, move |r| {
        let mut s = cb.lock().unwrap_or_else(|e| e.into_inner());
        s.result = Some(r);
        if let Some(w) = s.waker.take() {
            w.wake();
        }
    });
    MapFuture(state)
}
