//! `KubernetesRuntime.shell()` and `.environment()` (docs/contract.md §8): Magenta's `Shell`
//! and `Environment` on a session Pod, through its session agent. The shell is the one
//! `DockerShell` class of the library (its commands, terminals and logs as on an engine).

use std::collections::HashMap;
use std::sync::Arc;

use napi_derive::napi;

use super::docker_shell::{shell_options, DockerShell, DockerShellOptions};
use super::durations::duration_ms;
use super::error::{sync_error, Code, Outcome};
use super::kubernetes_file_io::KubernetesFileIO;
use super::kubernetes_runtime::KubernetesRuntime;
use crate::container_environment::ShellSettings;
use crate::kubernetes::{pod_environment, PodAgentSource, PodEnvironmentRequest};
use crate::shell::{self, CommandHost};

/// Options of `KubernetesRuntime.shell`.
#[napi(object, object_to_js = false)]
pub struct PodShellOptions {
    /// Absolute container path the commands run in.
    pub cwd: String,
    /// Names the log directory (`${logDir}/threads/<threadId>`); a plain file name, else
    /// `INVALID_ARGUMENT`.
    pub thread_id: String,
    /// Host directory for command logs; default `${os.tmpdir()}/container-isolation`.
    pub log_dir: Option<String>,
    /// Per command; default 300000.
    pub timeout_ms: Option<f64>,
    /// Added to every command's environment.
    pub env: Option<HashMap<String, String>>,
    /// Who runs the commands (a name, `uid` or `uid:gid`); default the Pod's user.
    pub user: Option<String>,
    /// Program and leading arguments; default `['bash', '-c']`, or `['/bin/sh', '-c']`
    /// where the image has no bash.
    pub shell: Option<Vec<String>>,
    /// The most lines `ShellResult.output` keeps; default 100000.
    pub max_output_lines: Option<u32>,
    /// The most bytes of text `ShellResult.output` keeps; default 16 MiB.
    pub max_output_bytes: Option<u32>,
}

/// Options of `KubernetesRuntime.environment`.
#[napi(object, object_to_js = false)]
pub struct PodEnvironmentOptions {
    /// Default: the container's working directory.
    pub cwd: Option<String>,
    /// Names the shell's log directory (`threads/<threadId>`); a plain file name, else
    /// `INVALID_ARGUMENT`.
    pub thread_id: String,
    /// Who files are written and commands run as; default the Pod's user.
    pub user: Option<String>,
    /// The shell's log directory; default `${os.tmpdir()}/container-isolation`.
    pub log_dir: Option<String>,
    /// The shell's per-command timeout; default 300000.
    pub timeout_ms: Option<f64>,
}

/// Magenta's `EnvironmentConfig` of a Pod environment.
#[napi(object)]
pub struct PodEnvironmentConfig {
    /// Always `kubernetes`.
    #[napi(js_name = "type", ts_type = "'kubernetes'")]
    pub kind: String,
    /// The Pod's name.
    pub pod: String,
    /// The environment's working directory in the Pod.
    pub cwd: String,
}

/// The native result of `KubernetesRuntime.environmentNative`; the package's entry point's
/// `environment()` returns Magenta's `Environment` shape instead.
#[napi(object, object_from_js = false)]
pub struct KubernetesEnvironment {
    /// Files of the Pod, relative paths against `cwd`.
    #[napi(js_name = "fileIO")]
    pub file_io: KubernetesFileIO,
    /// Commands in the Pod, in `cwd`.
    pub shell: DockerShell,
    /// Absolute container path.
    pub cwd: String,
    /// The user's home directory, from the image's `/etc/passwd`.
    pub home_dir: String,
    /// `['file-io', 'shell', 'threads']` (the package's entry point makes it a `Set`).
    pub available_capabilities: Vec<String>,
    /// `{ type: 'kubernetes', pod, cwd }`.
    pub environment_config: PodEnvironmentConfig,
}

#[napi]
impl KubernetesRuntime {
    /// Magenta's `Shell` in the Pod: its commands (and terminals) run by the Pod's session
    /// agent, started on first use; where the agent cannot serve, each command rejects
    /// `UNSUPPORTED` with the reason. Nothing is asked of the cluster until a command.
    #[napi]
    pub fn shell(
        &self,
        container_id: String,
        opts: PodShellOptions,
    ) -> napi::Result<DockerShell, Code> {
        let mut options = shell_options(DockerShellOptions {
            container: container_id.clone(),
            cwd: opts.cwd,
            thread_id: opts.thread_id,
            log_dir: opts.log_dir,
            timeout_ms: opts.timeout_ms,
            env: opts.env,
            user: opts.user,
            shell: opts.shell,
            engine: None,
            max_output_lines: opts.max_output_lines,
            max_output_bytes: opts.max_output_bytes,
            agent: None,
        })
        .map_err(sync_error)?;
        let source = PodAgentSource::new(self.inner.clone(), &container_id);
        options.host = CommandHost::Agent(Arc::new(source));
        let shell = shell::DockerShell::new(options).map_err(sync_error)?;
        Ok(DockerShell::from_core(shell))
    }

    /// The native form of `environment()` (the package's entry point adds it, shaped as
    /// Magenta's `Environment`): the FileIO, Shell, working directory and home directory a
    /// host needs to run an agent thread in the Pod, all through its session agent.
    #[napi(
        js_name = "environmentNative",
        ts_return_type = "Promise<KubernetesEnvironment>"
    )]
    pub async fn environment(
        &self,
        container_id: String,
        opts: PodEnvironmentOptions,
    ) -> Outcome<KubernetesEnvironment> {
        let runtime = self.inner.clone();
        async move {
            let shell = ShellSettings {
                log_dir: opts.log_dir.filter(|d| !d.is_empty()).map(Into::into),
                timeout: duration_ms(opts.timeout_ms, "environment timeoutMs")?,
            };
            let env = pod_environment(
                runtime,
                PodEnvironmentRequest {
                    pod: container_id.clone(),
                    cwd: opts.cwd.filter(|c| !c.is_empty()),
                    thread_id: opts.thread_id,
                    user: opts.user,
                    env: Default::default(),
                    replace_env: false,
                    shell,
                    usage: None,
                },
            )
            .await?;
            Ok(KubernetesEnvironment {
                file_io: KubernetesFileIO::from_core(env.files),
                shell: DockerShell::from_core(env.shell),
                cwd: env.cwd.clone(),
                home_dir: env.home_dir,
                available_capabilities: ["file-io", "shell", "threads"].map(String::from).to_vec(),
                environment_config: PodEnvironmentConfig {
                    kind: "kubernetes".into(),
                    pod: container_id,
                    cwd: env.cwd,
                },
            })
        }
        .await
        .into()
    }
}
