//! The errors of this crate.

/// What can go wrong when configuring or running a model.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum ModelError {
    /// A parameter is out of its range; the message names the parameter, the
    /// value and the accepted range.
    #[error("invalid {name} = {value}: {expected}")]
    InvalidParameter {
        /// The parameter's name, as on the command line.
        name: &'static str,
        /// The value given.
        value: String,
        /// What would have been accepted.
        expected: String,
    },
    /// The numerical integration of a fluid limit did not reach a fixed point.
    #[error("the fluid limit did not converge: after t = {time} the largest |ds_i/dt| is {residual:e} (tolerance {tolerance:e})")]
    NotConverged {
        /// Model time integrated.
        time: f64,
        /// Largest derivative component at the end.
        residual: f64,
        /// The tolerance that was asked for.
        tolerance: f64,
    },
    /// A bounded deque refused a push in a `--real` run.
    #[error("the {deque} deque of worker {worker} is full (capacity {capacity}) at step {step}: the run outgrew it")]
    DequeFull {
        /// The deque kind's name.
        deque: &'static str,
        /// The worker whose deque overflowed.
        worker: usize,
        /// The capacity it was created with.
        capacity: usize,
        /// The step at which it overflowed.
        step: u64,
    },
    /// A `--real` run was asked for something real threads cannot do.
    #[error("--real cannot run this: {0}")]
    RealUnsupported(String),
    /// A `--real` worker thread panicked.
    #[error("a worker thread of the real run panicked: {0}")]
    WorkerPanicked(String),
}

impl ModelError {
    pub(crate) fn invalid(
        name: &'static str,
        value: impl ToString,
        expected: impl Into<String>,
    ) -> Self {
        ModelError::InvalidParameter {
            name,
            value: value.to_string(),
            expected: expected.into(),
        }
    }
}
