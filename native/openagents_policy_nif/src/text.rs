//! Text into binaries made by `enif_make_new_binary`, which keeps a short
//! word on the process heap where rustler's `&str` makes a reference-counted
//! binary: every word answered here is a few bytes.

use rustler::{Encoder, Env, NewBinary, Term};

/// A string, encoded as a binary made with `enif_make_new_binary`: on the
/// process heap when it is small, reference-counted otherwise.
#[derive(Clone, Copy)]
pub struct Text<'s>(pub &'s str);

impl Encoder for Text<'_> {
    fn encode<'a>(&self, env: Env<'a>) -> Term<'a> {
        let mut binary = NewBinary::new(env, self.0.len());
        binary.as_mut_slice().copy_from_slice(self.0.as_bytes());
        binary.into()
    }
}
