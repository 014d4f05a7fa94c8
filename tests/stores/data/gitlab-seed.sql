-- A small seed on GitLab's own db/structure.sql (../shared/data/schemas/gitlab-structure.sql),
-- written for sitectl's store tests: a few users, a group, projects, issues, notes, a merge
-- request, labels, members; the dynamic partitions GitLab's partition manager creates at run
-- time (names and bounds in its pattern); and a few tables of odd shape a real database may
-- hold (identifiers with quotes, dots, dollar signs and unicode, a 63-byte name, a table
-- without a primary key, identity and generated columns, a numeric key with 20 digits).
--
-- seed(table, row) is tests/stores/data/pg-seed-helper.sql. Foreign keys are not checked while seeding
-- (session_replication_role = replica): the rows below keep them consistent where the tests
-- delete through them.
SET session_replication_role = replica;

-- GitLab's partition manager (Gitlab::Database::Partitioning) at boot: a MINVALUE partition,
-- the current month and the next ones; loose foreign keys' list partition 1.
CREATE TABLE gitlab_partitions_dynamic.loose_foreign_keys_deleted_records_1 PARTITION OF loose_foreign_keys_deleted_records FOR VALUES IN ('1');
CREATE TABLE gitlab_partitions_dynamic.verification_codes_000000 PARTITION OF verification_codes FOR VALUES FROM (MINVALUE) TO ('2026-11-01');
CREATE TABLE gitlab_partitions_dynamic.verification_codes_202611 PARTITION OF verification_codes FOR VALUES FROM ('2026-11-01') TO ('2026-12-01');
CREATE TABLE gitlab_partitions_dynamic.verification_codes_202612 PARTITION OF verification_codes FOR VALUES FROM ('2026-12-01') TO ('2027-01-01');
CREATE TABLE gitlab_partitions_dynamic.batched_background_migration_job_transition_logs_000000 PARTITION OF batched_background_migration_job_transition_logs FOR VALUES FROM (MINVALUE) TO ('2026-11-01');
CREATE TABLE gitlab_partitions_dynamic.batched_background_migration_job_transition_logs_202611 PARTITION OF batched_background_migration_job_transition_logs FOR VALUES FROM ('2026-11-01') TO ('2026-12-01');
CREATE TABLE gitlab_partitions_dynamic.incident_management_pending_alert_escalations_202611 PARTITION OF incident_management_pending_alert_escalations FOR VALUES FROM ('2026-11-01') TO ('2026-12-01');
CREATE TABLE gitlab_partitions_dynamic.incident_management_pending_issue_escalations_202611 PARTITION OF incident_management_pending_issue_escalations FOR VALUES FROM ('2026-11-01') TO ('2026-12-01');

SELECT pg_temp.seed('users', '{"id": 1, "username": "root", "email": "admin@example.com", "name": "Administrator", "admin": true, "projects_limit": 100000}');
SELECT pg_temp.seed('users', '{"id": 2, "username": "byteblaze", "email": "byteblaze@example.com", "name": "Byte Blaze", "projects_limit": 100000}');
SELECT pg_temp.seed('users', '{"id": 3, "username": "alice", "email": "alice@example.com", "name": "Alice", "projects_limit": 100000}');
SELECT setval('users_id_seq', 3);
SELECT pg_temp.seed('namespaces', '{"id": 1, "name": "root", "path": "root", "owner_id": 1, "type": "User"}');
SELECT pg_temp.seed('namespaces', '{"id": 2, "name": "byteblaze", "path": "byteblaze", "owner_id": 2, "type": "User"}');
SELECT pg_temp.seed('namespaces', '{"id": 3, "name": "a11y", "path": "a11y", "type": "Group", "traversal_ids": [3]}');
SELECT pg_temp.seed('namespaces', '{"id": 4, "name": "dotfiles", "path": "dotfiles", "type": "Project", "parent_id": 2}');
SELECT pg_temp.seed('namespaces', '{"id": 5, "name": "a11y-syntax", "path": "a11y-syntax", "type": "Project", "parent_id": 3}');
SELECT setval('namespaces_id_seq', 5);
SELECT pg_temp.seed('projects', '{"id": 1, "name": "dotfiles", "path": "dotfiles", "namespace_id": 2, "creator_id": 2, "project_namespace_id": 4, "visibility_level": 20}');
SELECT pg_temp.seed('projects', '{"id": 2, "name": "a11y-syntax", "path": "a11y-syntax", "namespace_id": 3, "creator_id": 1, "project_namespace_id": 5, "visibility_level": 20}');
SELECT setval('projects_id_seq', 2);
SELECT pg_temp.seed('members', '{"id": 1, "access_level": 50, "source_id": 3, "source_type": "Namespace", "user_id": 2, "type": "GroupMember", "member_namespace_id": 3, "notification_level": 3}');
SELECT pg_temp.seed('members', '{"id": 2, "access_level": 30, "source_id": 1, "source_type": "Project", "user_id": 3, "type": "ProjectMember", "member_namespace_id": 4, "notification_level": 3}');
SELECT setval('members_id_seq', 2);
SELECT pg_temp.seed('labels', '{"id": 1, "title": "bug", "color": "#ff0000", "project_id": 1, "type": "ProjectLabel"}');
SELECT pg_temp.seed('labels', '{"id": 2, "title": "feature", "color": "#00ff00", "project_id": 1, "type": "ProjectLabel"}');
SELECT setval('labels_id_seq', 2);
SELECT pg_temp.seed('work_item_types', '{"id": 1, "base_type": 0, "name": "Issue"}');
SELECT pg_temp.seed('issues', '{"id": 1, "title": "Fix the dark theme", "project_id": 1, "author_id": 2, "iid": 1, "namespace_id": 4, "state_id": 1, "work_item_type_id": 1}');
SELECT pg_temp.seed('issues', '{"id": 2, "title": "Keyboard shortcuts", "project_id": 1, "author_id": 3, "iid": 2, "namespace_id": 4, "state_id": 1, "work_item_type_id": 1}');
SELECT pg_temp.seed('issues', '{"id": 3, "title": "Contrast ratios", "project_id": 2, "author_id": 1, "iid": 1, "namespace_id": 5, "state_id": 2, "work_item_type_id": 1}');
SELECT setval('issues_id_seq', 3);
SELECT pg_temp.seed('issue_assignees', '{"issue_id": 1, "user_id": 3}');
SELECT pg_temp.seed('issue_assignees', '{"issue_id": 2, "user_id": 2}');
SELECT pg_temp.seed('label_links', '{"id": 1, "label_id": 1, "target_id": 1, "target_type": "Issue"}');
SELECT pg_temp.seed('label_links', '{"id": 2, "label_id": 2, "target_id": 2, "target_type": "Issue"}');
SELECT setval('label_links_id_seq', 2);
SELECT pg_temp.seed('notes', '{"id": 1, "note": "Confirmed on Firefox", "noteable_type": "Issue", "noteable_id": 1, "project_id": 1, "author_id": 3}');
SELECT pg_temp.seed('notes', '{"id": 2, "note": "Working on it", "noteable_type": "Issue", "noteable_id": 1, "project_id": 1, "author_id": 2}');
SELECT setval('notes_id_seq', 2);
SELECT pg_temp.seed('merge_requests', '{"id": 1, "target_branch": "main", "source_branch": "dark", "source_project_id": 1, "target_project_id": 1, "author_id": 2, "iid": 1, "title": "Dark theme"}');
SELECT setval('merge_requests_id_seq', 1);
SELECT pg_temp.seed('issue_search_data', '{"project_id": 1, "issue_id": 1, "search_vector": "dark theme"}');
SELECT pg_temp.seed('issue_search_data', '{"project_id": 2, "issue_id": 3, "search_vector": "contrast"}');
SELECT pg_temp.seed('verification_codes', '{"created_at": "2026-11-20 08:00:00+00", "visitor_id_code": "v1", "code": "123456", "phone": "+15550100"}');
SELECT pg_temp.seed('verification_codes', '{"created_at": "2026-10-02 08:00:00+00", "visitor_id_code": "v0", "code": "654321", "phone": "+15550101"}');
SELECT pg_temp.seed('analytics_cycle_analytics_issue_stage_events', '{"stage_event_hash_id": 7, "issue_id": 1, "group_id": 3, "project_id": 1, "start_event_timestamp": "2026-11-01 00:00:00"}');

-- Tables of odd shape.
CREATE TABLE public."Task ""notes"".v1 $r$ ünï" (id integer PRIMARY KEY, "note, text" text, "Ünï ""col""" text);
INSERT INTO public."Task ""notes"".v1 $r$ ünï" VALUES (1, 'a', 'b'), (2, E'tab\there', E'new\nline');
CREATE TABLE public.audit_log_without_a_primary_key (at timestamptz NOT NULL, what text);
INSERT INTO public.audit_log_without_a_primary_key VALUES ('2026-11-01 00:00:00+00', 'boot'), ('2026-11-01 00:00:00+00', 'boot');
CREATE TABLE public.counters_with_identity_and_generated_columns (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, n integer NOT NULL, twice integer GENERATED ALWAYS AS (n * 2) STORED);
INSERT INTO public.counters_with_identity_and_generated_columns (n) VALUES (1), (2), (3);
CREATE TABLE public.ledger_keyed_by_a_numeric (amount numeric(30, 5) PRIMARY KEY, label text);
INSERT INTO public.ledger_keyed_by_a_numeric VALUES (12345678901234567890.12345, 'big'), (0.5, 'half');
CREATE TABLE public.partitioned_with_a_name_of_sixty_three_bytes_which_is_the_limit (
  id bigint NOT NULL, created_at date NOT NULL, PRIMARY KEY (id, created_at)) PARTITION BY RANGE (created_at);
CREATE TABLE gitlab_partitions_dynamic.partitioned_with_a_name_of_sixty_three_bytes_which_is_the_2026 PARTITION OF public.partitioned_with_a_name_of_sixty_three_bytes_which_is_the_limit FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
CREATE TABLE gitlab_partitions_dynamic.partitioned_with_a_name_of_sixty_three_bytes_which_is_the_2027 PARTITION OF public.partitioned_with_a_name_of_sixty_three_bytes_which_is_the_limit FOR VALUES FROM ('2027-01-01') TO ('2028-01-01');
INSERT INTO public.partitioned_with_a_name_of_sixty_three_bytes_which_is_the_limit VALUES (1, '2026-05-01'), (2, '2027-05-01');

RESET session_replication_role;
ANALYZE;
