//! A str's UTF-8 text, borrowed without a copy where the platform allows.
//!
//! Under the stable ABI for Python 3.9 (`abi3-py39`), PyO3 reads a str by
//! asking CPython for a new bytes object with its UTF-8 (a copy and an
//! allocation per call): at 4-character chunks that was about 40% of the
//! time of a `feed` (0.0498 s against 0.0296 s on the same text when built
//! for 3.10's stable ABI, which borrows). `PyUnicode_AsUTF8AndSize`
//! borrows the UTF-8 form CPython caches in the str; it is exported by
//! every CPython since 3.3 (and part of the stable ABI from 3.10), so on
//! platforms that resolve symbols at load time it is called directly. On
//! Windows, where an abi3 module links against `python3.dll` (which only
//! exports it from 3.10), the copy stays.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::PyString;

#[cfg(not(windows))]
mod capi {
    use pyo3::ffi::{PyObject, Py_ssize_t};
    use std::os::raw::c_char;

    extern "C" {
        pub fn PyUnicode_AsUTF8AndSize(
            unicode: *mut PyObject,
            size: *mut Py_ssize_t,
        ) -> *const c_char;
    }
}

/// The UTF-8 text of `s`, borrowed from `s` where possible. Raises
/// `UnicodeEncodeError` for a str holding a lone surrogate (not text).
#[cfg(not(windows))]
#[allow(unsafe_code)]
pub fn utf8<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, str>> {
    let mut size: pyo3::ffi::Py_ssize_t = 0;
    // SAFETY: `s` is a live str object for 'a (the caller holds the
    // reference) and the GIL is held. CPython returns a pointer to the
    // str's cached UTF-8 form, valid and unchanged until the object is
    // freed (str objects are immutable), or NULL with an exception set.
    let data = unsafe { capi::PyUnicode_AsUTF8AndSize(s.as_ptr(), &mut size) };
    if data.is_null() {
        return Err(PyErr::fetch(s.py()));
    }
    let len = usize::try_from(size).unwrap_or(0);
    // SAFETY: CPython reports `size` bytes at `data`, alive for 'a (above).
    let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) };
    // CPython's UTF-8 is valid; checking costs little and keeps this safe
    // whatever the interpreter hands back.
    std::str::from_utf8(bytes)
        .map(Cow::Borrowed)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
}

/// The UTF-8 text of `s` (a copy: see the module's docs).
#[cfg(windows)]
pub fn utf8<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, str>> {
    s.to_cow()
}
