//! The ssh smart subtransport: one stateful stream per connection, through the system
//! `ssh` (libgit2 reuses the advertisement's stream for the negotiation and the pack).

use super::context::{to_git2, to_io, TransferContext};
use super::ssh_command;
use super::ssh_process::{Ending, SshProcess};
use crate::error::{Error, ErrorCode, Result};
use git2::transport::{Service, SmartSubtransport, SmartSubtransportStream};
use std::io::{self, Read, Write};
use std::sync::Arc;

pub(super) struct SshSubtransport {
    context: Arc<TransferContext>,
}

impl SshSubtransport {
    pub fn new(context: Arc<TransferContext>) -> SshSubtransport {
        SshSubtransport { context }
    }

    fn connect(&self, url: &str, service: Service) -> Result<SshStream> {
        let context = &self.context;
        context.check_url(url)?;
        let program = match service {
            Service::UploadPackLs | Service::UploadPack => "git-upload-pack",
            Service::ReceivePackLs | Service::ReceivePack => "git-receive-pack",
        };
        let target = ssh_command::target(&context.url)?;
        let command = ssh_command::command(&target, context.credentials.as_ref(), program)?;
        tracing::debug!(url = %context.url, program, "git transfer: starting ssh");
        let process = SshProcess::spawn(command, context.deadline).map_err(|e| {
            Error::new(
                ErrorCode::Git,
                format!("{}: cannot start ssh: {e}", context.url),
            )
        })?;
        Ok(SshStream {
            context: context.clone(),
            process,
            failed: false,
        })
    }
}

impl SmartSubtransport for SshSubtransport {
    fn action(
        &self,
        url: &str,
        service: Service,
    ) -> std::result::Result<Box<dyn SmartSubtransportStream>, git2::Error> {
        match self.connect(url, service) {
            Ok(stream) => Ok(Box::new(stream)),
            Err(error) => Err(to_git2(&self.context.fail(error))),
        }
    }

    fn close(&self) -> std::result::Result<(), git2::Error> {
        Ok(())
    }
}

struct SshStream {
    context: Arc<TransferContext>,
    process: SshProcess,
    failed: bool,
}

impl SshStream {
    /// Records why ssh stopped (from its exit and stderr) as the transfer's failure.
    fn fail(&mut self, what: &str, cause: Option<io::Error>) -> io::Error {
        self.failed = true;
        let ending = self.process.ending();
        let error = ending_error(&self.context, what, &ending, cause);
        to_io(&self.context.fail(error))
    }

    /// The end of ssh's output: a failure unless ssh exited cleanly.
    fn end_of_output(&mut self) -> io::Result<usize> {
        self.failed = true;
        let ending = self.process.ending();
        if ending.status.is_some_and(|status| status.success()) && !ending.timed_out {
            return Ok(0);
        }
        let error = ending_error(&self.context, "reading from ssh", &ending, None);
        Err(to_io(&self.context.fail(error)))
    }
}

impl Read for SshStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.failed {
            return Ok(0);
        }
        match self.process.read(buf) {
            Ok(0) => self.end_of_output(),
            Ok(n) => match self.context.count_received(n) {
                Ok(()) => Ok(n),
                Err(error) => {
                    self.failed = true;
                    Err(to_io(&self.context.fail(error)))
                }
            },
            Err(e) => Err(self.fail("reading from ssh", Some(e))),
        }
    }
}

impl Write for SshStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.failed {
            return Err(io::Error::from(io::ErrorKind::BrokenPipe));
        }
        match self.process.write_all(buf) {
            Ok(()) => Ok(buf.len()),
            Err(e) => Err(self.fail("writing to ssh", Some(e))),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.process.flush()
    }
}

/// TIMEOUT when the watchdog killed ssh, GIT_AUTH when the server refused the key,
/// else GIT with ssh's stderr (which names an unknown host key).
fn ending_error(
    context: &TransferContext,
    what: &str,
    ending: &Ending,
    cause: Option<io::Error>,
) -> Error {
    if ending.timed_out {
        return context.timeout_error("the ssh connection");
    }
    let url = &context.url;
    let said = if ending.stderr.is_empty() {
        String::new()
    } else {
        format!("; ssh said: {}", ending.stderr)
    };
    let status = match (&ending.status, cause) {
        (Some(status), _) => format!("ssh exited with {status}"),
        (None, Some(cause)) => format!("{what}: {cause}"),
        (None, None) => format!("{what}: the connection ended"),
    };
    if ending.stderr.contains("Permission denied") {
        return Error::new(
            ErrorCode::GitAuth,
            format!("{url}: the ssh server refused the key{said}"),
        );
    }
    if ending.stderr.contains("Host key verification failed")
        || ending
            .stderr
            .contains("REMOTE HOST IDENTIFICATION HAS CHANGED")
    {
        return Error::new(
            ErrorCode::Git,
            format!(
                "{url}: the ssh host key is not a known one for this host, refused; {status}{said}"
            ),
        );
    }
    Error::new(ErrorCode::Git, format!("{url}: {status}{said}"))
}
