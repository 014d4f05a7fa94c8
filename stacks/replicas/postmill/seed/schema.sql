-- Postmill replica schema: table/column/sequence/index names of contract-postmill-gitlab-map.md §1.7
-- (PostgreSQL, Postmill migrations replayed). Integer ids have NO default: the application
-- calls nextval('<table>_id_seq') itself, as Doctrine does. UUID-keyed tables have no sequence.
-- A replica subset: the tables the replica reads/writes plus the other names of §1.7 (mostly empty).

CREATE SEQUENCE users_id_seq INCREMENT 1 START 1;
CREATE SEQUENCE forums_id_seq INCREMENT 1 START 1;
CREATE SEQUENCE submissions_id_seq INCREMENT 1 START 1;
CREATE SEQUENCE comments_id_seq INCREMENT 1 START 1;
CREATE SEQUENCE submission_votes_id_seq INCREMENT 1 START 1;
CREATE SEQUENCE comment_votes_id_seq INCREMENT 1 START 1;
CREATE SEQUENCE bans_id_seq INCREMENT 1 START 1;
CREATE SEQUENCE message_threads_id_seq INCREMENT 1 START 1;
CREATE SEQUENCE wiki_pages_id_seq INCREMENT 1 START 1;

CREATE TABLE migration_versions (version varchar(191) PRIMARY KEY, executed_at timestamp(0));

CREATE TABLE themes (id uuid PRIMARY KEY, name text NOT NULL);

CREATE TABLE users (
  id bigint PRIMARY KEY,
  username text NOT NULL,
  normalized_username text NOT NULL,
  password text NOT NULL,
  email text,
  normalized_email text,
  created timestamptz NOT NULL,
  admin boolean NOT NULL DEFAULT false,
  trusted boolean NOT NULL DEFAULT false,
  locale text NOT NULL DEFAULT 'en',
  timezone text NOT NULL DEFAULT 'UTC',
  front_page text NOT NULL DEFAULT 'default',
  front_page_sort_mode text NOT NULL DEFAULT 'hot',
  night_mode text NOT NULL DEFAULT 'auto',
  last_seen timestamptz NOT NULL,
  biography text,
  registration_ip inet,
  allow_private_messages boolean NOT NULL DEFAULT true,
  submission_link_destination text NOT NULL DEFAULT 'url',
  preferred_theme_id uuid REFERENCES themes(id),
  notify_on_reply boolean NOT NULL DEFAULT true,
  notify_on_mentions boolean NOT NULL DEFAULT true,
  show_thumbnails boolean NOT NULL DEFAULT true,
  open_external_links_in_new_tab boolean NOT NULL DEFAULT false,
  auto_fetch_submission_titles boolean NOT NULL DEFAULT true,
  enable_post_previews boolean NOT NULL DEFAULT true,
  poppers_enabled boolean NOT NULL DEFAULT true,
  full_width_display_enabled boolean NOT NULL DEFAULT false,
  show_custom_stylesheets boolean NOT NULL DEFAULT true,
  preferred_fonts text
);
CREATE UNIQUE INDEX users_username_idx ON users (username);
CREATE UNIQUE INDEX users_normalized_username_idx ON users (normalized_username);

CREATE TABLE images (
  id uuid PRIMARY KEY, file_name text NOT NULL UNIQUE, width int, height int, sha256 text NOT NULL);

CREATE TABLE forums (
  id bigint PRIMARY KEY,
  name text NOT NULL,
  normalized_name text NOT NULL,
  title text NOT NULL,
  description text,
  sidebar text NOT NULL DEFAULT '',
  created timestamptz NOT NULL,
  featured boolean NOT NULL DEFAULT false,
  moderation_log_public boolean NOT NULL DEFAULT true,
  suggested_theme_id uuid REFERENCES themes(id),
  light_background_image_id uuid REFERENCES images(id),
  dark_background_image_id uuid REFERENCES images(id),
  background_image_mode text NOT NULL DEFAULT 'tile'
);
CREATE UNIQUE INDEX forums_name_idx ON forums (name);
CREATE UNIQUE INDEX forums_normalized_name_idx ON forums (normalized_name);

CREATE TABLE submissions (
  id bigint PRIMARY KEY,
  forum_id bigint NOT NULL REFERENCES forums(id),
  user_id bigint NOT NULL REFERENCES users(id),
  title text NOT NULL,
  url text,
  body text,
  timestamp timestamptz NOT NULL,
  ip inet,
  sticky boolean NOT NULL DEFAULT false,
  locked boolean NOT NULL DEFAULT false,
  ranking bigint NOT NULL,
  last_active timestamptz NOT NULL,
  comment_count int NOT NULL DEFAULT 0,
  net_score int NOT NULL DEFAULT 0,
  visibility text NOT NULL DEFAULT 'visible',
  media_type text NOT NULL DEFAULT 'url',
  image_id uuid REFERENCES images(id),
  edited_at timestamptz,
  moderated boolean NOT NULL DEFAULT false,
  user_flag text NOT NULL DEFAULT 'none',
  search_doc tsvector
);
CREATE INDEX submissions_forum_id_idx ON submissions (forum_id);
CREATE INDEX submissions_user_id_idx ON submissions (user_id);
CREATE INDEX submissions_search_idx ON submissions USING gin (search_doc);

CREATE TABLE comments (
  id bigint PRIMARY KEY,
  submission_id bigint NOT NULL REFERENCES submissions(id),
  user_id bigint NOT NULL REFERENCES users(id),
  parent_id bigint REFERENCES comments(id),
  body text NOT NULL,
  timestamp timestamptz NOT NULL,
  ip inet,
  visibility text NOT NULL DEFAULT 'visible',
  edited_at timestamptz,
  moderated boolean NOT NULL DEFAULT false,
  user_flag text NOT NULL DEFAULT 'none',
  net_score int NOT NULL DEFAULT 0,
  search_doc tsvector,
  CONSTRAINT comments_deleted_empty_body CHECK (visibility <> 'soft_deleted' OR body = '')
);
CREATE INDEX comments_submission_id_idx ON comments (submission_id);
CREATE INDEX comments_search_idx ON comments USING gin (search_doc);

CREATE TABLE submission_votes (
  id bigint PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users(id),
  submission_id bigint NOT NULL REFERENCES submissions(id),
  upvote boolean NOT NULL,
  timestamp timestamptz NOT NULL,
  ip inet
);
CREATE UNIQUE INDEX submission_user_vote_idx ON submission_votes (submission_id, user_id);

CREATE TABLE comment_votes (
  id bigint PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users(id),
  comment_id bigint NOT NULL REFERENCES comments(id),
  upvote boolean NOT NULL,
  timestamp timestamptz NOT NULL,
  ip inet
);
CREATE UNIQUE INDEX comment_user_vote_idx ON comment_votes (comment_id, user_id);

CREATE TABLE moderators (
  id uuid PRIMARY KEY,
  forum_id bigint NOT NULL REFERENCES forums(id),
  user_id bigint NOT NULL REFERENCES users(id),
  timestamp timestamptz NOT NULL
);
CREATE UNIQUE INDEX moderator_forum_user_idx ON moderators (forum_id, user_id);

CREATE TABLE forum_subscriptions (
  id uuid PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users(id),
  forum_id bigint NOT NULL REFERENCES forums(id),
  subscribed_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX forum_user_idx ON forum_subscriptions (forum_id, user_id);

CREATE TABLE forum_bans (
  id uuid PRIMARY KEY, forum_id bigint NOT NULL REFERENCES forums(id),
  user_id bigint NOT NULL REFERENCES users(id), banned_by_id bigint NOT NULL REFERENCES users(id),
  reason text NOT NULL, banned boolean NOT NULL, timestamp timestamptz NOT NULL, expires_at timestamptz);
CREATE TABLE user_bans (
  id uuid PRIMARY KEY, user_id bigint NOT NULL REFERENCES users(id),
  banned_by_id bigint NOT NULL REFERENCES users(id), reason text NOT NULL, banned boolean NOT NULL,
  timestamp timestamptz NOT NULL, expires_at timestamptz);
CREATE TABLE bans (
  id bigint PRIMARY KEY, ip inet NOT NULL, user_id bigint REFERENCES users(id),
  banned_by_id bigint NOT NULL REFERENCES users(id), reason text NOT NULL,
  timestamp timestamptz NOT NULL, expiry_date timestamptz);
CREATE TABLE hidden_forums (
  user_id bigint NOT NULL REFERENCES users(id), forum_id bigint NOT NULL REFERENCES forums(id),
  PRIMARY KEY (user_id, forum_id));
CREATE TABLE user_blocks (
  id uuid PRIMARY KEY, blocker_id bigint NOT NULL REFERENCES users(id),
  blocked_id bigint NOT NULL REFERENCES users(id), comment text, timestamp timestamptz NOT NULL);
CREATE TABLE forum_log_entries (
  id uuid PRIMARY KEY, forum_id bigint NOT NULL REFERENCES forums(id),
  user_id bigint REFERENCES users(id), was_admin boolean NOT NULL DEFAULT false,
  timestamp timestamptz NOT NULL, action_type text NOT NULL, submission_id bigint, comment_id bigint,
  ban_id uuid, title text, author_id bigint, reason text);
CREATE TABLE notifications (
  id uuid PRIMARY KEY, user_id bigint NOT NULL REFERENCES users(id),
  comment_id bigint REFERENCES comments(id), submission_id bigint REFERENCES submissions(id),
  message_id uuid, notification_type text NOT NULL);
CREATE TABLE message_threads (id bigint PRIMARY KEY);
CREATE TABLE message_thread_participants (
  message_thread_id bigint NOT NULL REFERENCES message_threads(id),
  user_id bigint NOT NULL REFERENCES users(id), PRIMARY KEY (message_thread_id, user_id));
CREATE TABLE messages (
  id uuid PRIMARY KEY, thread_id bigint NOT NULL REFERENCES message_threads(id),
  sender_id bigint NOT NULL REFERENCES users(id), body text NOT NULL,
  timestamp timestamptz NOT NULL, ip inet);
CREATE TABLE flairs (id uuid PRIMARY KEY, label text NOT NULL, flair_type text NOT NULL);
CREATE TABLE submissions_flairs (
  submission_id bigint NOT NULL REFERENCES submissions(id), flair_id uuid NOT NULL REFERENCES flairs(id),
  PRIMARY KEY (submission_id, flair_id));
CREATE TABLE forum_tags (id uuid PRIMARY KEY, name text NOT NULL, normalized_name text NOT NULL, description text);
CREATE TABLE forums_tags (
  forum_id bigint NOT NULL REFERENCES forums(id), tag_id uuid NOT NULL REFERENCES forum_tags(id),
  PRIMARY KEY (forum_id, tag_id));
CREATE TABLE css_theme_revisions (id uuid PRIMARY KEY, theme_id uuid NOT NULL REFERENCES themes(id),
  css text NOT NULL, timestamp timestamptz NOT NULL);
CREATE TABLE bad_phrases (id uuid PRIMARY KEY, phrase text NOT NULL, phrase_type text NOT NULL, timestamp timestamptz NOT NULL);
CREATE TABLE wiki_pages (id bigint PRIMARY KEY, path text NOT NULL, normalized_path text NOT NULL UNIQUE, locked boolean NOT NULL DEFAULT false);
CREATE TABLE wiki_revisions (id uuid PRIMARY KEY, page_id bigint NOT NULL REFERENCES wiki_pages(id),
  user_id bigint NOT NULL REFERENCES users(id), title text NOT NULL, body text NOT NULL, timestamp timestamptz NOT NULL);
CREATE TABLE sites (
  id uuid PRIMARY KEY,
  site_name text NOT NULL,
  registration_open boolean NOT NULL,
  username_change_enabled boolean NOT NULL DEFAULT false,
  unwhitelisted_user_messages_enabled boolean NOT NULL DEFAULT false,
  default_sort_mode text NOT NULL,
  default_theme_id uuid REFERENCES themes(id),
  url_images_enabled boolean NOT NULL DEFAULT true,
  trash_enabled boolean NOT NULL DEFAULT true,
  wiki_enabled boolean NOT NULL DEFAULT true,
  wiki_edit_role text NOT NULL DEFAULT 'ROLE_WHITELISTED',
  forum_create_role text NOT NULL,
  image_upload_role text NOT NULL,
  registration_captcha_enabled boolean NOT NULL DEFAULT false,
  submission_link_destination text NOT NULL DEFAULT 'url'
);

-- Search triggers (§1.7: title weight A, url B, body D; comments: body, english).
CREATE FUNCTION submissions_search_trigger() RETURNS trigger AS $$
BEGIN
  NEW.search_doc := setweight(to_tsvector('english', coalesce(NEW.title, '')), 'A')
                 || setweight(to_tsvector('english', coalesce(NEW.url, '')), 'B')
                 || setweight(to_tsvector('english', coalesce(NEW.body, '')), 'D');
  RETURN NEW;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER submissions_search_update BEFORE INSERT OR UPDATE ON submissions
  FOR EACH ROW EXECUTE FUNCTION submissions_search_trigger();
CREATE TRIGGER comments_search_update BEFORE INSERT OR UPDATE ON comments
  FOR EACH ROW EXECUTE FUNCTION tsvector_update_trigger(search_doc, 'pg_catalog.english', body);
