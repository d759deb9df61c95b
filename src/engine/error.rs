//! The engine layer's error: why an engine cannot run a job here, or
//! could not be made for it.

/// Why an engine refuses a job or cannot be set up; one line in words
/// (its `Display`), with the errno when the kernel gave one
/// ([`EngineError::errno`]).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The job's options do not fit its engine (or its submission mode).
    #[error("{0}")]
    Unfit(String),
    /// The kernel refused what the engine needs (io_uring's ring): its
    /// errno, and the cause in words.
    #[error("{msg}")]
    Setup { errno: i32, msg: String },
    /// The engine's `init` failed.
    #[error("{engine} engine setup failed: {source}")]
    Init {
        engine: &'static str,
        source: std::io::Error,
    },
    /// A submitter thread (`io_submit_mode=offload`) cannot be started.
    #[error("cannot start a submitter thread: {0}")]
    Thread(std::io::Error),
    /// A job's engine refused it before the run (`engine::preflight`).
    #[error("job '{job}': {source}")]
    Job {
        job: String,
        source: Box<EngineError>,
    },
}

impl EngineError {
    /// The errno of the failure: the kernel's when it gave one, else
    /// EINVAL (the job asks for what the engine cannot do).
    pub fn errno(&self) -> i32 {
        match self {
            EngineError::Unfit(_) => libc::EINVAL,
            EngineError::Setup { errno, .. } => *errno,
            EngineError::Init { source, .. } | EngineError::Thread(source) => {
                crate::sys::errno(source)
            }
            EngineError::Job { source, .. } => source.errno(),
        }
    }
}
