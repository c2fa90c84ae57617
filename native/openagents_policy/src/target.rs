//! The delegation target seam. Five surfaces hand work to a target (the Work
//! path, chat, text, voice and the API); they ask the same three questions,
//! answered here once:
//!
//! 1. *How is it addressed?* By its [`Kind`]; the host's kind-prefixed
//!    reference stays the address.
//! 2. *What is it doing?* One [`Lifecycle`], projected from whichever
//!    substrate owns it ([`BoxState`], [`RunState`], [`JobStatus`], a
//!    machine's [`MachineStatus`] with its reachability).
//! 3. *What may this caller do?* The [`Seam`]: capabilities from the
//!    lifecycle and the caller's [`Reach`], with the [`UnavailableReason`]
//!    when nothing.
//!
//! Deliberately absent: a Box's [`RuntimeClass`] ([`Kind::runtime_class`]
//! says why), and every [`Capability`] but the two the host's facade serves.

use serde::Serialize;

use crate::{vocabulary, Reading};

vocabulary! {
    /// The two kinds of delegation target. A third (a "cloud computer") is
    /// deliberately not a kind: an OpenAgents-managed machine is a Box.
    pub enum Kind in Kind {
        /// A sandbox VM the host provisions, caps and reclaims.
        Box => "box",
        /// Someone's own machine, connected or absent, never provisioned.
        Computer => "computer",
    }
}

vocabulary! {
    /// Who holds a target. Derived from the [`Kind`] alone.
    pub enum Custody in Custody {
        /// Provisioned and reclaimed by OpenAgents.
        OpenagentsManaged => "openagents_managed",
        /// The customer's own premises.
        CustomerPremises => "customer_premises",
    }
}

vocabulary! {
    /// The capacity catalog's runtime classes.
    pub enum RuntimeClass in RuntimeClass {
        /// Managed standard isolation behind the policy broker.
        Standard => "standard",
        /// Managed strong isolation behind the policy broker.
        Strong => "strong",
        /// Managed standard isolation for batch work.
        Batch => "batch",
        /// Customer-controlled isolation on the customer's network and
        /// premises: a paired computer, by construction.
        Connected => "connected",
    }
}

vocabulary! {
    /// The unified target lifecycle: the seven states of
    /// `openagents.cloud_computer.v1`, verbatim, so a target keeps its word
    /// when a control plane starts producing one.
    pub enum Lifecycle in Lifecycle {
        /// Present but not reachable: a shut laptop.
        Cold => "cold",
        /// Waiting for admission; has cost nothing and called nothing.
        Queued => "queued",
        /// Coming up, not yet ready for work.
        Starting => "starting",
        /// Ready for work.
        Active => "active",
        /// Going away.
        Stopping => "stopping",
        /// Broken, or in a state this vocabulary cannot name.
        Failed => "failed",
        /// Gone for good: reclaimed, or its credential revoked.
        Destroyed => "destroyed",
    }
}

vocabulary! {
    /// The lifecycle of one delegation. A delegation ends; a target persists.
    pub enum DelegationLifecycle in DelegationLifecycle {
        /// Accepted, not yet running.
        Queued => "queued",
        /// Being dispatched.
        Starting => "starting",
        Active => "active",
        /// Finished as asked.
        Succeeded => "succeeded",
        /// Ended without success, or in a state this vocabulary cannot name.
        Failed => "failed",
        Cancelled => "cancelled",
    }
}

vocabulary! {
    /// An operation a caller may exercise: only the two the host's delegation
    /// facade serves. Attach, stop, checkpoint, restore, fork and destroy are
    /// not offered: a list naming operations no route serves is worse than none.
    pub enum Capability in Capability {
        /// Start work on a target.
        Start => "start",
        /// Cancel a running delegation.
        Cancel => "cancel",
    }
}

vocabulary! {
    /// Why a target offers no `start`: its lifecycle (each word but
    /// `not_authorized` is the [`Lifecycle`] of the same word), when that is
    /// what stands in the way, or missing authority. No third vocabulary:
    /// kind and lifecycle together already tell a shut laptop from a reclaimed Box.
    pub enum UnavailableReason in UnavailableReason {
        Cold => "cold",
        Queued => "queued",
        Starting => "starting",
        Stopping => "stopping",
        Failed => "failed",
        Destroyed => "destroyed",
        /// The target is active; the caller lacks the reach for its kind.
        NotAuthorized => "not_authorized",
    }
}

vocabulary! {
    /// A Box's substrate state: the host's `ConversationBox.states/0`, plus the
    /// synthetic `queued` of a fan-out item admission has not let through.
    pub enum BoxState in BoxState {
        /// Row created.
        Init => "init",
        /// VM being rented.
        Provisioning => "provisioning",
        /// VM rented, not bootstrapped.
        Provisioned => "provisioned",
        /// Repository being cloned.
        Cloning => "cloning",
        /// Bootstrapped.
        Ready => "ready",
        /// Bootstrapped and idle.
        Idle => "idle",
        Running => "running",
        Archiving => "archiving",
        /// Archived and reclaimed.
        Archived => "archived",
        /// Broken.
        Error => "error",
        /// A fan-out item not yet admitted: the only producer of the
        /// contract's `queued` today.
        Queued => "queued",
    }
}

vocabulary! {
    /// One Box run's state: the host's `Box.Run.states/0`.
    pub enum RunState in RunState {
        /// Admitted, not dispatched.
        Admitted => "admitted",
        /// Dispatched to the Box.
        Dispatched => "dispatched",
        Running => "running",
        Completed => "completed",
        Failed => "failed",
        Cancelled => "cancelled",
        TimedOut => "timed_out",
        Lost => "lost",
    }
}

vocabulary! {
    /// One Computer delegation's `work_jobs` status: the host's
    /// `Work.Job.statuses/0`.
    pub enum JobStatus in JobStatus {
        Queued => "queued",
        Running => "running",
        Completed => "completed",
        Failed => "failed",
        Interrupted => "interrupted",
        BudgetExhausted => "budget_exhausted",
        Cancelled => "cancelled",
    }
}

vocabulary! {
    /// A paired machine's status column.
    pub enum MachineStatus in MachineStatus {
        /// Paired, credential live.
        Active => "active",
        /// Credential revoked; no pairing brings the record back.
        Revoked => "revoked",
    }
}

impl Kind {
    /// Who holds a target of this kind. Reads the kind and nothing else, so it
    /// cannot vary with the route, the surface, or the asking.
    #[must_use]
    pub const fn custody(self) -> Custody {
        match self {
            // Provisioned, capped and reclaimed by the host itself.
            Self::Box => Custody::OpenagentsManaged,
            // Somebody's own machine: a property of the thing, not the asking.
            Self::Computer => Custody::CustomerPremises,
        }
    }

    /// The capacity class this kind belongs to, or `None` when no admitted
    /// class describes it.
    #[must_use]
    pub const fn runtime_class(self) -> Option<RuntimeClass> {
        match self {
            // Rented from a third party, egress posture unestablished: naming
            // `standard` would publish a containment claim no test backs.
            Self::Box => None,
            // Connected by construction; Capacity already counts machines as one.
            Self::Computer => Some(RuntimeClass::Connected),
        }
    }
}

impl BoxState {
    /// The unified lifecycle of a Box in this state.
    #[must_use]
    pub const fn lifecycle(self) -> Lifecycle {
        match self {
            // A logical Box that has cost and called nothing.
            Self::Queued => Lifecycle::Queued,
            // Not bootstrapped: refusing work on a half-ready Box costs a poll,
            // advertising it costs a failed command.
            Self::Init | Self::Provisioning | Self::Provisioned | Self::Cloning => {
                Lifecycle::Starting
            }
            // Bootstrapped, unlike the four above; no other reason stated.
            Self::Ready | Self::Idle | Self::Running => Lifecycle::Active,
            // On its way to archived; no reason stated beyond the word.
            Self::Archiving => Lifecycle::Stopping,
            // Reclaimed: gone for good, and one provisions another Box instead.
            Self::Archived => Lifecycle::Destroyed,
            // Broken: the one known Box state that reads `failed`.
            Self::Error => Lifecycle::Failed,
        }
    }
}

impl RunState {
    /// The delegation lifecycle of a Box run in this state.
    #[must_use]
    pub const fn lifecycle(self) -> DelegationLifecycle {
        match self {
            // The same meaning (`cancelled` the same word); no more stated.
            Self::Admitted => DelegationLifecycle::Queued,
            Self::Dispatched => DelegationLifecycle::Starting,
            Self::Running => DelegationLifecycle::Active,
            Self::Completed => DelegationLifecycle::Succeeded,
            Self::Cancelled => DelegationLifecycle::Cancelled,
            // Ended without success. The run's own state travels beside the
            // word and keeps which way (the seeds say so of the job's words).
            Self::Failed | Self::TimedOut | Self::Lost => DelegationLifecycle::Failed,
        }
    }
}

impl DelegationLifecycle {
    /// Whether a delegation in this lifecycle has ended (a surface showing work
    /// in motion leaves it out); what may be cancelled is [`DelegationSeam`]'s.
    #[must_use]
    pub const fn has_ended(self) -> bool {
        matches!(self, Self::Succeeded | Self::Failed | Self::Cancelled)
    }
}

impl JobStatus {
    /// The statuses of a work job whose delegation has ended, in the
    /// vocabulary's order.
    #[must_use]
    pub fn ended() -> Vec<Self> {
        Self::ALL.iter().copied().filter(|status| status.lifecycle().has_ended()).collect()
    }

    /// The delegation lifecycle of a work job in this status.
    #[must_use]
    pub const fn lifecycle(self) -> DelegationLifecycle {
        match self {
            // The same meaning (`queued`, `cancelled` the same word); no more stated.
            Self::Queued => DelegationLifecycle::Queued,
            Self::Running => DelegationLifecycle::Active,
            Self::Completed => DelegationLifecycle::Succeeded,
            Self::Cancelled => DelegationLifecycle::Cancelled,
            // Ended without success. The job's own status keeps which way, so
            // one cross-kind vocabulary grows no branch per substrate.
            Self::Failed | Self::Interrupted | Self::BudgetExhausted => DelegationLifecycle::Failed,
        }
    }
}

/// A substrate word's lifecycle as read: a known word's own, `failed` for
/// anything else. That is the seeds' catch-all (no reason stated); their tests
/// map every known word, so a new one fails them instead of reading `failed`.
/// A job whose cancel is in flight (`stopping`) is a real input that lands here.
macro_rules! read_lifecycle {
    ($($substrate:ident => $lifecycle:ident),+) => {$(
        impl Reading<$substrate> {
            /// The lifecycle: a known word's own, `failed` for anything else.
            #[must_use]
            pub const fn lifecycle(self) -> $lifecycle {
                match self {
                    Self::Known(word) => word.lifecycle(),
                    Self::Unrecognized => $lifecycle::Failed,
                }
            }
        }
    )+};
}

read_lifecycle!(BoxState => Lifecycle, RunState => DelegationLifecycle);
read_lifecycle!(JobStatus => DelegationLifecycle);

/// What the host knows of a paired machine when it asks for its lifecycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MachineObservation {
    /// The status column, as read.
    pub status: Reading<MachineStatus>,
    /// Whether `revoked_at` is set. Any set value counts.
    pub revoked: bool,
    /// The live reachability read, passed in rather than taken.
    pub online: bool,
}

impl MachineObservation {
    /// The unified lifecycle of the Computer.
    #[must_use]
    pub const fn lifecycle(self) -> Lifecycle {
        match (self.status, self.revoked, self.online) {
            // Revoked: the credential is gone and no pairing brings it back.
            (Reading::Known(MachineStatus::Revoked), _, _) | (_, true, _) => Lifecycle::Destroyed,
            // Paired and reachable now, by the live read passed in.
            (Reading::Known(MachineStatus::Active), false, true) => Lifecycle::Active,
            // The laptop is shut and nothing the host does opens it (an
            // unreadable status lands here too, by the seeds' last arm).
            _ => Lifecycle::Cold,
        }
    }
}

/// The per-kind reach a caller has already proved. Required, never assumed:
/// a surface that forgot to check cannot get capabilities by omission.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reach {
    /// The caller proved reach for the target's kind.
    Authorized,
    /// It did not.
    NotAuthorized,
}

impl From<bool> for Reach {
    fn from(authorized: bool) -> Self {
        if authorized {
            Self::Authorized
        } else {
            Self::NotAuthorized
        }
    }
}

impl UnavailableReason {
    /// Why a target in `lifecycle` offers nothing to a caller with `reach`,
    /// or `None` when it offers `start`.
    #[must_use]
    pub const fn of(lifecycle: Lifecycle, reach: Reach) -> Option<Self> {
        match (lifecycle, reach) {
            // Ready for work, and the caller proved reach: `start` is offered.
            (Lifecycle::Active, Reach::Authorized) => None,
            // Reach is per kind (IDENTITY-009): the lifecycle allows what the
            // caller does not, and a surface cannot widen reach past it.
            (Lifecycle::Active, Reach::NotAuthorized) => Some(Self::NotAuthorized),
            // Not active: the lifecycle itself is the reason.
            (Lifecycle::Cold, _) => Some(Self::Cold),
            (Lifecycle::Queued, _) => Some(Self::Queued),
            (Lifecycle::Starting, _) => Some(Self::Starting),
            (Lifecycle::Stopping, _) => Some(Self::Stopping),
            (Lifecycle::Failed, _) => Some(Self::Failed),
            (Lifecycle::Destroyed, _) => Some(Self::Destroyed),
        }
    }
}

/// The seam fields of one target, built only by [`Seam::new`], so no caller
/// can hold a seam whose capabilities disagree with its lifecycle and reach.
/// It serializes to the Elixir map's JSON (five keys, `null` for nothing), and
/// is deliberately not `Deserialize`: that would be a second constructor.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Seam {
    custody: Custody,
    runtime_class: Option<RuntimeClass>,
    lifecycle: Lifecycle,
    capabilities: &'static [Capability],
    unavailable_reason: Option<UnavailableReason>,
}

impl Seam {
    /// The seam of a `kind` target in `lifecycle`, for a caller with `reach`:
    /// `start` exactly when [`UnavailableReason::of`] gives no reason.
    #[must_use]
    pub fn new(kind: Kind, lifecycle: Lifecycle, reach: Reach) -> Self {
        let unavailable_reason = UnavailableReason::of(lifecycle, reach);
        Self {
            custody: kind.custody(),
            runtime_class: kind.runtime_class(),
            lifecycle,
            // Computed here once, so a surface renders it and never widens it.
            capabilities: if unavailable_reason.is_none() { &[Capability::Start] } else { &[] },
            unavailable_reason,
        }
    }

    /// What the caller may do now: `[start]` or nothing.
    #[must_use]
    pub const fn capabilities(&self) -> &'static [Capability] {
        self.capabilities
    }

    /// Why nothing is offered, or `None` when `start` is.
    #[must_use]
    pub const fn unavailable_reason(&self) -> Option<UnavailableReason> {
        self.unavailable_reason
    }
}

/// The seam fields of one delegation: its lifecycle and whether the caller
/// can still cancel it. Built only by [`DelegationSeam::new`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DelegationSeam {
    lifecycle: DelegationLifecycle,
    capabilities: &'static [Capability],
}

impl DelegationSeam {
    /// The seam of a delegation in `lifecycle`.
    #[must_use]
    pub fn new(lifecycle: DelegationLifecycle) -> Self {
        let running = matches!(
            lifecycle,
            DelegationLifecycle::Queued
                | DelegationLifecycle::Starting
                | DelegationLifecycle::Active
        );
        Self {
            lifecycle,
            // Resolving it already passed the per-kind reach check, so cancel
            // turns only on whether it is under way; an ended one has none.
            capabilities: if running { &[Capability::Cancel] } else { &[] },
        }
    }

    /// `[cancel]` while the delegation is under way, nothing after.
    #[must_use]
    pub const fn capabilities(&self) -> &'static [Capability] {
        self.capabilities
    }
}
