//! Terms out, without touching the heap on the paths every request takes.
//!
//! rustler's builders (`Term::map_from_arrays`, `Vec<T>::encode`, ...) copy
//! their input into fresh `Vec`s of raw terms before the one `enif_*` call.
//! Here the raw terms come from the caller's stack arrays, or straight from
//! the atoms `words` cached at load, and go to the VM as they are. Text is
//! written into a buffer on the stack and copied once into the binary.

use std::fmt::{self, Display, Write as _};
use std::io;
use std::mem::MaybeUninit;

use rustler::sys::{c_uint, enif_make_list_from_array, enif_make_map_from_arrays, ErlNifTerm};
use rustler::types::atom;
use rustler::{Atom, Encoder, Env, Error, NewBinary, NifResult, Term};

/// How many terms a list or map is built from on the stack. Every family has
/// at most 32 fields (the core's `Admitted` is a `u32`), and every vocabulary
/// is shorter, so only `classify` on a long column list goes past it.
pub const STACK: usize = 32;

/// Cached atoms as the raw terms they are.
pub fn raw(atoms: &[Atom]) -> &[ErlNifTerm] {
    // SAFETY: `Atom` is `#[repr(transparent)]` over `ErlNifTerm`, so a slice
    // of one is a slice of the other with the same length and alignment.
    unsafe { std::slice::from_raw_parts(atoms.as_ptr().cast::<ErlNifTerm>(), atoms.len()) }
}

/// A list of `items`, in order.
pub fn list<'a>(env: Env<'a>, items: &[ErlNifTerm]) -> Term<'a> {
    let len = c_uint::try_from(items.len()).expect("a list shorter than 2^32 terms");
    // SAFETY: `items` is valid for `len` reads for the duration of the call,
    // which copies them; `env` is the environment of the running call.
    unsafe {
        Term::new(
            env,
            enif_make_list_from_array(env.as_c_arg(), items.as_ptr(), len),
        )
    }
}

/// A map of `keys` to `values`, pairwise. A key given twice is a bad argument,
/// as with rustler's `Term::map_from_arrays`.
pub fn map<'a>(env: Env<'a>, keys: &[ErlNifTerm], values: &[ErlNifTerm]) -> NifResult<Term<'a>> {
    if keys.len() != values.len() {
        return Err(Error::BadArg);
    }
    let mut map = MaybeUninit::uninit();
    // SAFETY: both arrays are valid for `keys.len()` reads for the duration of
    // the call, which copies them; `map` is written when the call succeeds.
    let made = unsafe {
        enif_make_map_from_arrays(
            env.as_c_arg(),
            keys.as_ptr(),
            values.as_ptr(),
            keys.len(),
            map.as_mut_ptr(),
        )
    };
    if made == 0 {
        Err(Error::BadArg)
    } else {
        // SAFETY: the VM wrote the map, a term of this environment.
        Ok(unsafe { Term::new(env, map.assume_init()) })
    }
}

/// Up to [`STACK`] raw terms gathered on the stack, and on the heap past that.
pub struct Terms {
    len: usize,
    stack: [ErlNifTerm; STACK],
    heap: Vec<ErlNifTerm>,
}

impl Terms {
    /// No terms yet.
    #[inline]
    pub fn new() -> Self {
        Self {
            len: 0,
            stack: [ErlNifTerm::default(); STACK],
            heap: Vec::new(),
        }
    }

    /// Appends `term`.
    #[inline]
    pub fn push(&mut self, term: ErlNifTerm) {
        if self.len < STACK {
            self.stack[self.len] = term;
            self.len += 1;
        } else {
            self.spill(term);
        }
    }

    /// Appends `term` past the stack's room: every term moves to the heap.
    #[cold]
    fn spill(&mut self, term: ErlNifTerm) {
        if self.heap.is_empty() {
            self.heap.reserve(STACK * 2);
            self.heap.extend_from_slice(&self.stack);
        }
        self.heap.push(term);
        self.len += 1;
    }

    /// The terms so far, in order.
    #[inline]
    pub fn as_slice(&self) -> &[ErlNifTerm] {
        if self.len <= STACK {
            &self.stack[..self.len]
        } else {
            &self.heap
        }
    }

    /// The terms as a list.
    #[inline]
    pub fn list<'a>(&self, env: Env<'a>) -> Term<'a> {
        list(env, self.as_slice())
    }
}

impl FromIterator<ErlNifTerm> for Terms {
    #[inline]
    fn from_iter<I: IntoIterator<Item = ErlNifTerm>>(items: I) -> Self {
        let mut terms = Self::new();
        for term in items {
            terms.push(term);
        }
        terms
    }
}

/// A list of the binaries of `words`, in order.
pub fn binaries(env: Env<'_>, words: impl IntoIterator<Item = &'static str>) -> Term<'_> {
    words
        .into_iter()
        .map(|word| word.encode(env).as_c_arg())
        .collect::<Terms>()
        .list(env)
}

/// `{:error, reason}`.
pub fn error<'a>(env: Env<'a>, reason: Term<'a>) -> Term<'a> {
    (atom::error(), reason).encode(env)
}

/// How much text is written on the stack before it moves to the heap: more
/// than any refusal or seam the core writes.
const TEXT: usize = 512;

/// Text written on the stack, and on the heap once it outgrows [`TEXT`].
pub struct Text {
    len: usize,
    stack: [u8; TEXT],
    heap: Vec<u8>,
}

impl Text {
    pub fn new() -> Self {
        Self {
            len: 0,
            stack: [0; TEXT],
            heap: Vec::new(),
        }
    }

    #[inline]
    fn push(&mut self, bytes: &[u8]) {
        // Once the text has moved to the heap it is longer than the stack, so
        // the length alone tells where it is.
        let end = self.len + bytes.len();
        if end <= TEXT {
            self.stack[self.len..end].copy_from_slice(bytes);
        } else {
            if self.len <= TEXT {
                self.spill(end);
            }
            self.heap.extend_from_slice(bytes);
        }
        self.len = end;
    }

    /// Moves the text to the heap, with room for `len` bytes and more.
    #[cold]
    fn spill(&mut self, len: usize) {
        self.heap.reserve(len.max(TEXT * 2));
        self.heap.extend_from_slice(&self.stack[..self.len]);
    }

    fn as_bytes(&self) -> &[u8] {
        if self.len <= TEXT {
            &self.stack[..self.len]
        } else {
            &self.heap
        }
    }

    /// The text as a binary.
    pub fn binary<'a>(&self, env: Env<'a>) -> Term<'a> {
        binary(env, self.as_bytes())
    }
}

impl fmt::Write for Text {
    #[inline]
    fn write_str(&mut self, text: &str) -> fmt::Result {
        self.push(text.as_bytes());
        Ok(())
    }
}

impl io::Write for Text {
    #[inline]
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.push(bytes);
        Ok(bytes.len())
    }

    #[inline]
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.push(bytes);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A binary holding `bytes`, as rustler encodes a `&str`.
pub fn binary<'a>(env: Env<'a>, bytes: &[u8]) -> Term<'a> {
    NewBinary::from_slice(env, bytes).into()
}

/// `value`'s `Display`, as a binary: the same bytes as `value.to_string()`.
pub fn display<'a>(env: Env<'a>, value: &impl Display) -> Term<'a> {
    let mut text = Text::new();
    write!(text, "{value}").expect("writing to memory cannot fail");
    text.binary(env)
}

/// The JSON `write` writes (what `serde_json::to_string` would return), or
/// `{:error, why}` should serde fail.
pub fn json(env: Env<'_>, write: impl FnOnce(&mut Text) -> serde_json::Result<()>) -> Term<'_> {
    let mut text = Text::new();
    match write(&mut text) {
        Ok(()) => text.binary(env),
        Err(why) => error(env, display(env, &why)),
    }
}
