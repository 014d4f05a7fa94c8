-- sitectl GitLab contract replica: the subset of GitLab CE's gitlabhq_production schema that
-- the contract names (contract-postmill-gitlab-map.md §2.5). Table and column names follow
-- GitLab's; only the columns the replica reads or a tool may query are present, and those GitLab's
-- own triggers on these tables read (seed/real_structure.py puts GitLab's structure around them).
CREATE TABLE schema_migrations (version varchar PRIMARY KEY);
CREATE TABLE application_settings (
  id bigserial PRIMARY KEY,
  throttle_protected_paths_enabled boolean NOT NULL DEFAULT true,
  throttle_protected_paths_requests_per_period integer NOT NULL DEFAULT 10,
  throttle_protected_paths_period_in_seconds integer NOT NULL DEFAULT 60,
  session_expire_delay integer NOT NULL DEFAULT 10080,
  signup_enabled boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL);
CREATE TABLE users (
  id bigserial PRIMARY KEY,
  email varchar NOT NULL UNIQUE,
  encrypted_password varchar NOT NULL,
  username varchar NOT NULL,
  name varchar,
  admin boolean NOT NULL DEFAULT false,
  state varchar NOT NULL DEFAULT 'active',
  user_type smallint,
  bio varchar DEFAULT '', location varchar DEFAULT '', website_url varchar DEFAULT '' NOT NULL,
  failed_attempts integer DEFAULT 0, locked_at timestamptz,
  sign_in_count integer DEFAULT 0, current_sign_in_at timestamptz, last_sign_in_at timestamptz,
  confirmed_at timestamptz, projects_limit integer NOT NULL DEFAULT 100000,
  created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL);
CREATE UNIQUE INDEX index_users_on_username ON users (lower(username));
CREATE TABLE user_details (user_id bigint PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  job_title varchar(200) NOT NULL DEFAULT '', bio varchar(255) NOT NULL DEFAULT '',
  website_url text NOT NULL DEFAULT '', location text NOT NULL DEFAULT '');
CREATE TABLE user_statuses (user_id bigint PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  cached_markdown_version integer, emoji varchar NOT NULL DEFAULT 'speech_balloon',
  message varchar(100), message_html varchar, availability smallint NOT NULL DEFAULT 0,
  clear_status_at timestamptz);
CREATE TABLE users_star_projects (id bigserial PRIMARY KEY, project_id bigint NOT NULL,
  user_id bigint NOT NULL, created_at timestamptz, updated_at timestamptz, UNIQUE (user_id, project_id));
CREATE TABLE user_follow_users (follower_id bigint NOT NULL, followee_id bigint NOT NULL,
  PRIMARY KEY (follower_id, followee_id));
CREATE TABLE personal_access_tokens (id bigserial PRIMARY KEY, user_id bigint NOT NULL REFERENCES users(id),
  name varchar NOT NULL, revoked boolean DEFAULT false, expires_at date, scopes varchar NOT NULL DEFAULT '--- []',
  impersonation boolean NOT NULL DEFAULT false, token_digest varchar UNIQUE, last_used_at timestamptz,
  created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL);
CREATE TABLE namespaces (
  id bigserial PRIMARY KEY, name varchar NOT NULL, path varchar NOT NULL, owner_id bigint,
  type varchar NOT NULL DEFAULT 'User', parent_id bigint, visibility_level integer NOT NULL DEFAULT 20,
  description varchar NOT NULL DEFAULT '', traversal_ids integer[] NOT NULL DEFAULT '{}',
  description_html text, cached_markdown_version integer,
  created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL);
CREATE TABLE projects (
  id bigserial PRIMARY KEY, name varchar, path varchar, description text, namespace_id bigint NOT NULL,
  creator_id bigint, visibility_level integer NOT NULL DEFAULT 0, archived boolean NOT NULL DEFAULT false,
  star_count integer NOT NULL DEFAULT 0, storage_version smallint DEFAULT 2,
  repository_storage varchar NOT NULL DEFAULT 'default', project_namespace_id bigint,
  forked_from_project_id bigint, description_html text, cached_markdown_version integer,
  has_external_issue_tracker boolean, has_external_wiki boolean,
  created_at timestamptz, updated_at timestamptz, last_activity_at timestamptz, last_repository_updated_at timestamptz);
CREATE TABLE project_statistics (id bigserial PRIMARY KEY, project_id bigint NOT NULL UNIQUE, namespace_id bigint NOT NULL,
  commit_count bigint NOT NULL DEFAULT 0, storage_size bigint NOT NULL DEFAULT 0, repository_size bigint NOT NULL DEFAULT 0,
  wiki_size bigint, lfs_objects_size bigint NOT NULL DEFAULT 0, build_artifacts_size bigint NOT NULL DEFAULT 0,
  packages_size bigint NOT NULL DEFAULT 0, snippets_size bigint DEFAULT 0, uploads_size bigint NOT NULL DEFAULT 0,
  pipeline_artifacts_size bigint NOT NULL DEFAULT 0);
CREATE TABLE routes (id bigserial PRIMARY KEY, source_id bigint NOT NULL, source_type varchar NOT NULL,
  path varchar NOT NULL, name varchar, namespace_id bigint, created_at timestamptz, updated_at timestamptz,
  UNIQUE (source_type, source_id));
CREATE UNIQUE INDEX index_routes_on_path ON routes (lower(path));
CREATE TABLE members (id bigserial PRIMARY KEY, access_level integer NOT NULL, source_id bigint NOT NULL,
  source_type varchar NOT NULL, user_id bigint, notification_level integer NOT NULL DEFAULT 3,
  type varchar NOT NULL, created_by_id bigint, invite_email varchar, requested_at timestamptz,
  expires_at date, member_namespace_id bigint, state smallint DEFAULT 0,
  created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL);
CREATE TABLE project_authorizations (user_id bigint NOT NULL, project_id bigint NOT NULL,
  access_level integer NOT NULL, PRIMARY KEY (user_id, project_id));
CREATE TABLE internal_ids (id bigserial PRIMARY KEY, project_id bigint, usage integer NOT NULL,
  last_value integer NOT NULL, namespace_id bigint, UNIQUE (usage, project_id));
CREATE TABLE milestones (id bigserial PRIMARY KEY, iid integer, title varchar NOT NULL, project_id bigint,
  group_id bigint, description text, description_html text, due_date date, start_date date,
  state varchar DEFAULT 'active', created_at timestamptz, updated_at timestamptz);
CREATE TABLE labels (id bigserial PRIMARY KEY, title varchar, color varchar, project_id bigint, group_id bigint,
  type varchar, description varchar, template boolean DEFAULT false, created_at timestamptz, updated_at timestamptz);
CREATE TABLE label_links (id bigserial PRIMARY KEY, label_id bigint, target_id bigint, target_type varchar,
  created_at timestamptz, updated_at timestamptz);
CREATE TABLE issues (id bigserial PRIMARY KEY, iid integer, project_id bigint, title varchar, title_html text,
  description text, description_html text, cached_markdown_version integer, author_id bigint,
  milestone_id bigint, state_id smallint NOT NULL DEFAULT 1, due_date date, confidential boolean NOT NULL DEFAULT false,
  closed_at timestamptz, closed_by_id bigint, issue_type smallint DEFAULT 0, work_item_type_id bigint,
  updated_by_id bigint, last_edited_at timestamptz,
  created_at timestamptz, updated_at timestamptz, UNIQUE (project_id, iid),
  CONSTRAINT check_2addf801cd CHECK (work_item_type_id IS NOT NULL));  -- GitLab's own check
CREATE TABLE issue_assignees (user_id bigint NOT NULL, issue_id bigint NOT NULL, PRIMARY KEY (issue_id, user_id));
CREATE TABLE merge_requests (id bigserial PRIMARY KEY, iid integer, target_project_id bigint NOT NULL,
  source_project_id bigint, source_branch varchar NOT NULL, target_branch varchar NOT NULL,
  title varchar, title_html text, description text, description_html text, cached_markdown_version integer,
  author_id bigint, assignee_id bigint, milestone_id bigint, state_id smallint NOT NULL DEFAULT 1,
  merge_status varchar NOT NULL DEFAULT 'unchecked', draft boolean NOT NULL DEFAULT false,
  merge_user_id bigint, updated_by_id bigint, last_edited_at timestamptz,
  created_at timestamptz, updated_at timestamptz, UNIQUE (target_project_id, iid));
CREATE TABLE merge_request_assignees (id bigserial PRIMARY KEY, user_id bigint NOT NULL,
  merge_request_id bigint NOT NULL, created_at timestamptz, UNIQUE (merge_request_id, user_id));
CREATE TABLE merge_request_reviewers (id bigserial PRIMARY KEY, user_id bigint NOT NULL,
  merge_request_id bigint NOT NULL, created_at timestamptz NOT NULL, state smallint NOT NULL DEFAULT 0,
  UNIQUE (merge_request_id, user_id));
CREATE TABLE merge_request_metrics (id bigserial PRIMARY KEY, merge_request_id bigint NOT NULL UNIQUE,
  merged_by_id bigint, merged_at timestamptz, latest_closed_by_id bigint, latest_closed_at timestamptz,
  target_project_id bigint, latest_build_started_at timestamptz, latest_build_finished_at timestamptz,
  pipeline_id bigint, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL);
CREATE TABLE notes (id bigserial PRIMARY KEY, note text, note_html text, cached_markdown_version integer,
  noteable_type varchar, noteable_id bigint, author_id bigint, project_id bigint, system boolean NOT NULL DEFAULT false,
  discussion_id varchar, type varchar, commit_id varchar, line_code varchar,
  created_at timestamptz, updated_at timestamptz);
CREATE INDEX index_notes_on_noteable ON notes (noteable_type, noteable_id);
CREATE TABLE todos (id bigserial PRIMARY KEY, user_id bigint NOT NULL, project_id bigint, target_id bigint,
  target_type varchar NOT NULL, author_id bigint NOT NULL, action integer NOT NULL, state varchar NOT NULL,
  created_at timestamptz, updated_at timestamptz);
-- lookup indexes (GitLab has equivalents); they keep list pages fast at SCALE=full
CREATE INDEX index_label_links_on_target_id_and_target_type ON label_links (target_id, target_type);
CREATE INDEX index_label_links_on_label_id ON label_links (label_id);
CREATE INDEX index_members_on_source_id_and_source_type ON members (source_id, source_type);
CREATE INDEX index_members_on_user_id ON members (user_id);
CREATE INDEX index_namespaces_on_owner_id ON namespaces (owner_id);
CREATE INDEX index_namespaces_on_parent_id ON namespaces (parent_id);
CREATE INDEX index_namespaces_on_lower_path ON namespaces (lower(path));
CREATE INDEX index_projects_on_namespace_id ON projects (namespace_id);
CREATE INDEX index_projects_on_last_activity_at ON projects (last_activity_at);
CREATE INDEX index_project_authorizations_on_project_id ON project_authorizations (project_id);
CREATE INDEX index_labels_on_project_id ON labels (project_id);
CREATE INDEX index_milestones_on_project_id ON milestones (project_id);
CREATE INDEX index_issues_on_author_id ON issues (author_id);
CREATE INDEX index_issues_on_project_id_and_state_id ON issues (project_id, state_id, created_at);
CREATE INDEX index_issue_assignees_on_user_id ON issue_assignees (user_id);
CREATE INDEX index_merge_requests_on_author_id ON merge_requests (author_id);
CREATE INDEX index_merge_requests_on_target_project_id_and_state_id ON merge_requests (target_project_id, state_id, created_at);
CREATE INDEX index_merge_request_assignees_on_user_id ON merge_request_assignees (user_id);
CREATE INDEX index_merge_request_reviewers_on_user_id ON merge_request_reviewers (user_id);
CREATE INDEX index_notes_on_project_id ON notes (project_id);
CREATE INDEX index_users_star_projects_on_project_id ON users_star_projects (project_id);
CREATE INDEX index_user_follow_users_on_followee_id ON user_follow_users (followee_id);
CREATE INDEX index_todos_on_user_id ON todos (user_id);
