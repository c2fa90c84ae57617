//! Text into binaries.
//!
//! rustler encodes a `&str` or `String` as a reference-counted binary: a
//! separate allocation, freed only when a garbage collection finds it dead.
//! Every word this library answers with is a few bytes, and the VM keeps a
//! binary of up to 64 bytes on the calling process's heap instead, which is
//! what `enif_make_new_binary` (rustler's `NewBinary`) makes. Answers are
//! encoded through [`Text`] so each gets the cheaper kind; the two are the
//! same term to every Erlang operation. The `link_for_attempt/3` rows of
//! `make bench` are where the difference shows.

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

/// `words` mapped to [`Text`]s.
pub fn texts<T: Copy>(all: &[T], word: fn(T) -> &'static str) -> Vec<Text<'static>> {
    all.iter().map(|&value| Text(word(value))).collect()
}
