defmodule OpenAgents.Repo.Migrations.CreateHostTables do
  use Ecto.Migration

  # The tables the library's decisions read, with the columns of the host's
  # schemas (shared/upstream.md). Primary and foreign keys are UUIDs.
  def change do
    create table(:users) do
      add :handle, :string, null: false
      add :admin, :boolean, null: false, default: false
      timestamps()
    end

    create unique_index(:users, [:handle])

    create table(:repositories) do
      add :slug, :string, null: false
      add :name, :string, null: false
      timestamps()
    end

    create unique_index(:repositories, [:slug])

    create table(:repository_memberships) do
      add :repository_id, references(:repositories, on_delete: :delete_all), null: false
      add :user_id, references(:users, on_delete: :delete_all), null: false
      timestamps()
    end

    create unique_index(:repository_memberships, [:repository_id, :user_id])

    create table(:issues) do
      add :repository_id, references(:repositories, on_delete: :delete_all), null: false
      add :number, :integer, null: false
      add :title, :text, null: false
      timestamps()
    end

    create unique_index(:issues, [:repository_id, :number])

    create table(:conversations) do
      add :user_id, references(:users, on_delete: :delete_all), null: false
      add :title, :text
      timestamps()
    end

    create table(:conversation_boxes) do
      add :user_id, references(:users, on_delete: :delete_all), null: false
      add :conversation_id, references(:conversations, on_delete: :nilify_all)
      add :state, :string, null: false
      add :workspace_path, :text
      timestamps()
    end

    create index(:conversation_boxes, [:user_id])

    create table(:box_runs) do
      add :conversation_box_id, references(:conversation_boxes, on_delete: :delete_all),
        null: false

      add :state, :string, null: false
      add :command, :text
      timestamps()
    end

    create table(:machines) do
      add :user_id, references(:users, on_delete: :delete_all), null: false
      add :name, :string, null: false
      add :tier, :string
      add :platform, :string
      add :agent_version, :string
      add :roots, {:array, :text}, null: false, default: []
      add :token_digest, :string
      add :token_expires_at, :utc_datetime
      add :status, :string, null: false, default: "active"
      add :revoked_at, :utc_datetime
      add :last_seen_at, :utc_datetime
      add :last_probe, :map
      add :scoped_forge_credentials_enabled, :boolean, null: false, default: false
      timestamps()
    end

    create index(:machines, [:user_id])
    create constraint(:machines, :status_is_known, check: "status IN ('active', 'revoked')")

    create table(:artifact_links) do
      add :account_id, references(:users, on_delete: :delete_all), null: false
      add :repository_id, references(:repositories, on_delete: :delete_all), null: false
      add :artifact_type, :string, null: false
      add :artifact_ref, :string, null: false
      add :tier, :string, null: false
      add :consent, :map, null: false
      add :authority_snapshot, :map
      add :revoked_at, :utc_datetime
      add :revocation_tombstone, :map
      timestamps(updated_at: false)
    end

    create unique_index(:artifact_links, [:artifact_type, :artifact_ref])

    create table(:work_jobs) do
      add :conversation_id, references(:conversations, on_delete: :nilify_all)
      add :owner_visitor_id, :string
      add :machine_id, references(:machines, on_delete: :nilify_all)
      add :surface, :string
      add :goal, :text
      add :context_hint, :text
      add :requesting_tool_step_ref, :string
      add :kind, :string, null: false
      add :delegation, :map
      add :authority_snapshot, :map
      add :budget_snapshot, :map
      add :status, :string, null: false
      add :report, :text
      add :error_code, :string
      add :model_id, :string
      add :instruction_digest, :string
      add :tool_catalog_digest, :string
      add :memory_snapshot_ref, :string
      add :tool_call_count, :integer, null: false, default: 0
      add :continuation_count, :integer, null: false, default: 0
      add :usage, :map
      add :owner_node, :string
      add :generation, :integer, null: false, default: 0
      add :report_message_id, :string
      add :started_at, :utc_datetime
      add :completed_at, :utc_datetime
      timestamps()
    end

    create table(:forge_assignments) do
      add :conversation_id, references(:conversations, on_delete: :nilify_all)
      add :conversation_box_id, references(:conversation_boxes, on_delete: :nilify_all)
      add :machine_id, references(:machines, on_delete: :nilify_all)
      add :repository_id, references(:repositories, on_delete: :delete_all), null: false
      add :issue_id, references(:issues, on_delete: :delete_all), null: false
      add :run_id, references(:box_runs, on_delete: :nilify_all)
      add :work_job_id, references(:work_jobs, on_delete: :nilify_all)
      add :target_kind, :string, null: false
      add :credential_delivery_status, :string
      add :credential_delivery_reason, :text
      add :requesting_principal, :map, null: false
      add :branch, :string
      add :state, :string, null: false
      add :terminal_branch, :string
      add :terminal_commit, :string
      add :failure_reason, :text
      add :deadline_at, :utc_datetime
      add :admitted_at, :utc_datetime
      add :started_at, :utc_datetime
      add :finished_at, :utc_datetime
      add :transparency_tier, :string, null: false
      add :artifact_link_id, references(:artifact_links, on_delete: :nilify_all)
      timestamps(type: :utc_datetime_usec)
    end

    create index(:forge_assignments, [:repository_id, :inserted_at])
    create unique_index(:forge_assignments, [:artifact_link_id])

    create table(:issue_evidence) do
      add :commit_sha, :string, null: false
      add :family, :string, null: false
      add :receipt_id, :string
      add :plane, :string
      add :environment, :string
      add :result, :string
      add :actor, :map
      add :source, :string
      add :repository_id, references(:repositories, on_delete: :delete_all), null: false
      add :issue_id, references(:issues, on_delete: :delete_all), null: false
      add :assignment_id, references(:forge_assignments, on_delete: :delete_all)
      add :transparency_tier, :string, null: false
      add :artifact_link_id, references(:artifact_links, on_delete: :nilify_all)
      timestamps(updated_at: false)
    end

    create index(:issue_evidence, [:assignment_id])

    create table(:traces) do
      add :user_id, references(:users, on_delete: :nilify_all)
      add :digest, :string, null: false
      add :visibility, :string, null: false, default: "public"
      add :document, :map, null: false
      add :byte_size, :integer, null: false
      add :assignment_id, references(:forge_assignments, on_delete: :delete_all)
      timestamps(updated_at: false)
    end

    create index(:traces, [:assignment_id])
  end
end
