//! One relay stream on this side: the agent's `Data` for it written into a local duplex
//! pipe (credit returned for each piece written), and what is written into the pipe's other
//! end sent as `Data` while the agent's credit lasts. The code that handles the connection
//! sees only the other end: an ordinary `AsyncRead + AsyncWrite`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use container_isolation_agent::protocol::{
    data_header, encode, Message, DATA_HEADER, RELAY_CHUNK, RELAY_WINDOW,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::sync::{mpsc, Notify};

/// What the agent sent for a stream.
pub enum Inbound {
    Data(Vec<u8>),
    End,
    Abort,
}

/// How many bytes the agent lets this side send.
#[derive(Default)]
pub struct Credit {
    bytes: Mutex<u64>,
    granted: Notify,
}

impl Credit {
    pub fn new(bytes: u64) -> Credit {
        Credit {
            bytes: Mutex::new(bytes),
            granted: Notify::new(),
        }
    }

    /// Adds credit, never beyond twice the window (an agent that sends more gains nothing).
    pub fn grant(&self, bytes: u32) {
        let mut have = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        *have = (*have + u64::from(bytes)).min(2 * u64::from(RELAY_WINDOW));
        self.granted.notify_one();
    }

    async fn take(&self) -> usize {
        loop {
            let have = *self.bytes.lock().unwrap_or_else(|e| e.into_inner());
            if have > 0 {
                return have.min(RELAY_CHUNK as u64) as usize;
            }
            self.granted.notified().await;
        }
    }

    fn spend(&self, bytes: usize) {
        let mut have = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        *have = have.saturating_sub(bytes as u64);
    }
}

/// A stream's state shared with the channel's reader.
pub struct StreamShared {
    pub credit: Credit,
    /// The agent's bytes received and not yet written into the pipe.
    pub pending: AtomicUsize,
}

pub struct Pump {
    pub id: u32,
    pub pipe: DuplexStream,
    pub inbound: mpsc::UnboundedReceiver<Inbound>,
    pub shared: Arc<StreamShared>,
    pub outgoing: mpsc::Sender<Vec<u8>>,
    pub idle: Duration,
}

impl Pump {
    /// Runs until both directions have ended (true) or the stream failed, was aborted or
    /// sat idle past its bound (false; the agent is then told `Abort`).
    pub async fn run(self) -> bool {
        let Pump {
            id,
            pipe,
            mut inbound,
            shared,
            outgoing,
            idle,
        } = self;
        let (mut from_pipe, mut into_pipe) = tokio::io::split(pipe);
        let last = Arc::new(Mutex::new(Instant::now()));
        let touch = || *last.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        let toward_pipe = async {
            while let Some(next) = inbound.recv().await {
                touch();
                match next {
                    Inbound::Data(data) => {
                        into_pipe.write_all(&data).await.map_err(|_| ())?;
                        shared.pending.fetch_sub(data.len(), Ordering::AcqRel);
                        let credit = Message::Credit {
                            bytes: data.len() as u32,
                        };
                        outgoing.send(encode(id, &credit)).await.map_err(|_| ())?;
                    }
                    Inbound::End => return into_pipe.shutdown().await.map_err(|_| ()),
                    Inbound::Abort => return Err(()),
                }
            }
            Err(())
        };
        let toward_agent = async {
            loop {
                let room = shared.credit.take().await;
                // Read straight into the frame that carries it.
                let mut frame = vec![0u8; DATA_HEADER + room];
                let n = from_pipe
                    .read(&mut frame[DATA_HEADER..])
                    .await
                    .map_err(|_| ())?;
                touch();
                if n == 0 {
                    return outgoing
                        .send(encode(id, &Message::End))
                        .await
                        .map_err(|_| ());
                }
                shared.credit.spend(n);
                frame.truncate(DATA_HEADER + n);
                frame[..DATA_HEADER].copy_from_slice(&data_header(id, n));
                outgoing.send(frame).await.map_err(|_| ())?;
            }
        };
        let idle_watch = async {
            loop {
                let since = last.lock().unwrap_or_else(|e| e.into_inner()).elapsed();
                if since >= idle {
                    return;
                }
                tokio::time::sleep(idle - since).await;
            }
        };
        let ended = tokio::select! {
            both = async { tokio::try_join!(toward_pipe, toward_agent) } => both.is_ok(),
            _ = idle_watch => false,
        };
        if !ended {
            let _ = outgoing.send(encode(id, &Message::Abort)).await;
        }
        ended
    }
}
