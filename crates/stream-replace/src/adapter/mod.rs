//! Adapters from common chunk sources to a [`Replacer`](crate::Replacer).

pub(crate) mod io;
pub(crate) mod iter;
#[cfg(feature = "stream")]
pub(crate) mod stream;
