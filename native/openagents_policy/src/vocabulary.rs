//! Closed vocabularies, each declared once with [`vocabulary!`], and the one
//! refusal a word outside them earns.

use serde::{Deserialize, Serialize};

/// Declares [`Vocabulary`] from one list (the enum, its `ALL`, names and
/// words, each named for its type in the module beside it), so no second falls behind.
macro_rules! vocabularies {
    ($( $variant:ident in $module:ident => $name:literal ),+ $(,)?) => {
        /// The closed vocabularies this crate knows, named so a refusal can say
        /// which one a word fell outside of.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum Vocabulary {
            $( #[doc = concat!("[`crate::", stringify!($module), "::", stringify!($variant), "`].")] $variant, )+
        }

        impl Vocabulary {
            /// Every vocabulary, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            /// The vocabulary's name as a refusal prints it.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)+
                }
            }

            /// The vocabulary's words, in declaration order.
            #[must_use]
            pub fn words(self) -> Vec<&'static str> {
                match self {
                    $(Self::$variant => crate::$module::$variant::words(),)+
                }
            }
        }
    };
}

vocabularies! {
    Kind in target => "target kind",
    Custody in target => "custody",
    RuntimeClass in target => "runtime class",
    Lifecycle in target => "target lifecycle",
    DelegationLifecycle in target => "delegation lifecycle",
    Capability in target => "capability",
    UnavailableReason in target => "unavailable reason",
    BoxState in target => "Box state",
    RunState in target => "Box run state",
    JobStatus in target => "work job status",
    MachineStatus in target => "machine status",
    Tier in ladder => "transparency tier",
    Access in ladder => "access",
    Family in disclosure => "disclosure family",
    Rung in disclosure => "disclosure rung",
    Relationship in disclosure => "viewer relationship",
}

impl std::fmt::Display for Vocabulary {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// Why a word was not accepted: typed, so a caller can tell which vocabulary
/// refused and what it was handed without parsing a sentence.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "refusal", rename_all = "snake_case")]
pub enum Refusal {
    /// The word is not one of the vocabulary's words. `word` is the input
    /// (bytes that are not UTF-8 replaced), cut at [`Refusal::KEPT`] bytes
    /// with its length noted, so refusing a huge input costs what a small one does.
    #[error("{word:?} is not a word of the {vocabulary} vocabulary")]
    UnknownWord {
        /// The vocabulary that refused.
        vocabulary: Vocabulary,
        /// What it was handed.
        word: String,
    },
}

impl Refusal {
    /// How many bytes of a refused word a refusal keeps.
    pub const KEPT: usize = 64;

    /// The refusal for `word`, which `vocabulary` does not contain.
    #[must_use]
    pub fn unknown(vocabulary: Vocabulary, word: &[u8]) -> Self {
        let word = if word.len() > Self::KEPT {
            format!("{}… ({} bytes)", String::from_utf8_lossy(&word[..Self::KEPT]), word.len())
        } else {
            String::from_utf8_lossy(word).into_owned()
        };
        Self::UnknownWord { vocabulary, word }
    }
}

/// Declares a closed vocabulary: a `Copy` enum whose every variant is one
/// word (its doc says which, so a variant its word says all of needs none).
/// Named `in` one of the [`Vocabulary`]s, its values also parse, refusing
/// any other word; unnamed (the decisions crate's tables), they are only read.
#[doc(hidden)]
#[macro_export]
macro_rules! vocabulary {
    (
        $(#[$meta:meta])*
        pub enum $name:ident in $vocabulary:ident { $($body:tt)+ }
    ) => {
        $crate::vocabulary! { $(#[$meta])* pub enum $name { $($body)+ } }

        impl $name {
            /// The value a word names, or the refusal of anything else.
            ///
            /// # Errors
            ///
            /// [`crate::Refusal::UnknownWord`] for anything that is not
            /// exactly one of the words.
            pub fn parse(word: impl AsRef<[u8]>) -> Result<Self, $crate::Refusal> {
                match Self::read(word.as_ref()) {
                    $crate::Reading::Known(value) => Ok(value),
                    $crate::Reading::Unrecognized => Err($crate::Refusal::unknown(
                        $crate::Vocabulary::$vocabulary,
                        word.as_ref(),
                    )),
                }
            }
        }
    };
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$variant_meta:meta])* $variant:ident => $word:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(
            Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord,
            serde::Serialize, serde::Deserialize,
        )]
        pub enum $name {
            $(
                $(#[$variant_meta])*
                #[doc = concat!("\n\nThe word `", $word, "`.")]
                #[serde(rename = $word)]
                $variant,
            )+
        }

        impl $name {
            /// Every word of the vocabulary, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            /// The word, spelled as Elixir and JSON spell it.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $word,)+
                }
            }

            /// How `word` reads: the value it names, or `Unrecognized`. Bytes,
            /// as Erlang binaries need not be UTF-8.
            #[must_use]
            pub fn read(word: impl AsRef<[u8]>) -> $crate::Reading<Self> {
                let word = word.as_ref();
                Self::ALL.iter().copied().find(|known| known.as_str().as_bytes() == word).into()
            }

            /// Every word of the vocabulary as a string, in declaration order.
            #[must_use]
            pub fn words() -> Vec<&'static str> {
                Self::ALL.iter().map(|value| value.as_str()).collect()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str(self.as_str())
            }
        }
    };
}

/// A substrate word as read: one the vocabulary knows, or an honest admission
/// that it does not. Substrates grow words before this crate learns them (a
/// job being cancelled is `"stopping"`): the projections still answer for
/// such a word, as the seed did, but a caller can tell it was not recognised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reading<S> {
    /// A word of the substrate's vocabulary.
    Known(S),
    /// Anything else: an unknown word, bytes that are not UTF-8, nothing.
    Unrecognized,
}

impl<S> From<Option<S>> for Reading<S> {
    fn from(found: Option<S>) -> Self {
        found.map_or(Self::Unrecognized, Self::Known)
    }
}
