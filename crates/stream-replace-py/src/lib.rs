//! The `stream_replace._engine` extension module: the engine's `Rules` and
//! `Replacer`, and its guard layer, for the pure-Python package around it.

use pyo3::prelude::*;

mod guard;
mod replacer;
mod text;

/// The extension module. Every class in it is safe to use from several
/// threads: a stream is locked while the engine runs on it.
#[pymodule(gil_used = false)]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    replacer::register(m)?;
    guard::register(m)?;
    Ok(())
}
