"""The PostgreSQL store on Postmill's migrated schema (its 112 Doctrine migrations applied in
order: 30 tables, 50 foreign keys of which CASCADE and SET NULL ones, its two search triggers
computing tsvector documents, uuid, inet and tsvector columns, 9 sequences), in Debian's
PostgreSQL with a small seed (tests/stores/data/postmill-seed.sql). After each mutation, made
the way Postmill makes it (Doctrine deletes the children it owns before the parent, the server's
foreign-key actions and the search triggers do the rest), a reset brings the database back to
exactly golden, proven by a dump that shares no code with sitectl
(:func:`tests.stores.real_schema.pg_state`). The server is 15 (Debian bookworm); WebArena's forum
runs 14.7."""
from __future__ import annotations

import pytest

from tests.stores import real_schema as rs

pytestmark = pytest.mark.docker

CONTAINER = "sitectl-test-postmill-schema"
DB = "postmill"

# mutation: (SQL as Postmill issues it, the reset's path: "delta" or "full").
MUTATIONS = {
    # deletes, as Doctrine orders them, with the foreign keys' CASCADE and SET NULL
    "delete a comment (its votes and notifications first; replies detached)":
        ("DELETE FROM comment_votes WHERE comment_id = 1; DELETE FROM notifications WHERE comment_id IN (1, 2); "
         "UPDATE comments SET parent_id = NULL WHERE parent_id = 1; DELETE FROM comments WHERE id = 1", "delta"),
    "delete a submission (votes, comments, flairs; its log entry SET NULL)":
        ("DELETE FROM submission_votes WHERE submission_id = 2; DELETE FROM submissions_flairs WHERE submission_id = 2; "
         "DELETE FROM comments WHERE submission_id = 2; DELETE FROM submissions WHERE id = 2", "delta"),
    "delete a forum (hidden-forum rows CASCADE)":
        ("DELETE FROM forum_subscriptions WHERE forum_id = 2; DELETE FROM submissions WHERE forum_id = 2; "
         "DELETE FROM forums WHERE id = 2", "delta"),
    "delete a forum with tags, moderators, posts and a hidden row":
        ("DELETE FROM forums_tags WHERE forum_id = 1; DELETE FROM moderators WHERE forum_id = 1; "
         "DELETE FROM forum_subscriptions WHERE forum_id = 1; DELETE FROM forum_log_entries WHERE forum_id = 1; "
         "DELETE FROM comment_votes; DELETE FROM notifications; DELETE FROM comments WHERE submission_id IN (1, 2); "
         "DELETE FROM submission_votes WHERE submission_id IN (1, 2); DELETE FROM submissions_flairs; "
         "DELETE FROM submissions WHERE forum_id = 1; DELETE FROM forums WHERE id = 1", "delta"),
    "delete a theme (users' and forums' references SET NULL)":
        ("DELETE FROM themes WHERE id IN ('11111111-1111-1111-1111-111111111111', '22222222-2222-2222-2222-222222222222')",
         "delta"),
    "purge a user (votes, subscriptions, hidden forums, messages, then the user)":
        ("DELETE FROM submission_votes WHERE user_id = 3; DELETE FROM forum_subscriptions WHERE user_id = 3; "
         "DELETE FROM hidden_forums WHERE user_id = 3; DELETE FROM message_thread_participants WHERE user_id = 3; "
         "DELETE FROM notifications WHERE comment_id = 2; DELETE FROM comments WHERE user_id = 3; "
         "DELETE FROM submissions_flairs WHERE submission_id = 2; DELETE FROM forum_log_entries WHERE submission_id = 2; "
         "DELETE FROM comment_votes WHERE comment_id = 3; DELETE FROM submission_votes WHERE submission_id = 2; "
         "DELETE FROM comments WHERE submission_id = 2; DELETE FROM submissions WHERE user_id = 3; "
         "DELETE FROM users WHERE id = 3", "delta"),
    # what the site's pages write (the search triggers fire)
    "submit a post": ("INSERT INTO submissions (id, forum_id, user_id, title, body, timestamp, media_type, ranking, "
                      "last_active, comment_count, net_score, sticky, user_flag, visibility) VALUES "
                      "(nextval('submissions_id_seq'), 1, 2, 'New post', 'Body', now(), 'url', 1, now(), 0, 0, false, 0, "
                      "'visible')", "delta"),
    "edit a post's title (search document recomputed)": ("UPDATE submissions SET title = 'Harry Potter is fine', "
                                                         "edited_at = now() WHERE id = 1", "delta"),
    "comment on a post (count, notification)":
        ("INSERT INTO comments (id, user_id, submission_id, parent_id, body, timestamp, user_flag, net_score, visibility) "
         "VALUES (nextval('comments_id_seq'), 2, 2, 3, 'Foundation', now(), 0, 0, 'visible'); "
         "UPDATE submissions SET comment_count = comment_count + 1, last_active = now() WHERE id = 2; "
         "INSERT INTO notifications (id, user_id, comment_id, notification_type, timestamp) VALUES "
         "('c0000000-0000-0000-0000-000000000002', 1, currval('comments_id_seq'), 'comment', now())", "delta"),
    "upvote a post": ("INSERT INTO submission_votes (id, user_id, submission_id, upvote, timestamp) VALUES "
                      "(nextval('submission_votes_id_seq'), 2, 3, true, now()); "
                      "UPDATE submissions SET net_score = net_score + 1 WHERE id = 3", "delta"),
    "change a vote": ("UPDATE submission_votes SET upvote = false WHERE id = 1; "
                      "UPDATE submissions SET net_score = net_score - 2 WHERE id = 1", "delta"),
    "retract a vote": ("DELETE FROM submission_votes WHERE id = 2; UPDATE submissions SET net_score = 1 WHERE id = 1",
                       "delta"),
    "subscribe to a forum": ("INSERT INTO forum_subscriptions (id, user_id, forum_id, subscribed_at) VALUES "
                             "('b0000000-0000-0000-0000-000000000009', 2, 2, now())", "delta"),
    "hide a forum": ("INSERT INTO hidden_forums VALUES (1, 2)", "delta"),
    "send a message": ("INSERT INTO message_threads VALUES (nextval('message_threads_id_seq')); "
                       "INSERT INTO message_thread_participants VALUES (currval('message_threads_id_seq'), 2); "
                       "INSERT INTO messages (id, sender_id, thread_id, body, timestamp, ip) VALUES "
                       "('66666666-6666-6666-6666-666666666667', 2, currval('message_threads_id_seq'), 'Yo', now(), "
                       "'10.0.0.1')", "delta"),
    "edit the wiki": ("INSERT INTO wiki_revisions (id, page_id, user_id, title, body, timestamp) VALUES "
                      "('77777777-7777-7777-7777-777777777778', 1, 1, 'Rules', 'Be very nice', now())", "delta"),
    "register": ("INSERT INTO users (id, username, password, email, created, normalized_username, locale, front_page, "
                 "front_page_sort_mode, timezone, allow_private_messages) VALUES (nextval('users_id_seq'), 'newbie', "
                 "'x', 'n@example.com', now(), 'newbie', 'en', 'default', 'hot', 'UTC', true)", "delta"),
    "log in (last seen)": ("UPDATE users SET last_seen = now() WHERE id = 1", "delta"),
    "site settings": ("UPDATE sites SET site_name = 'Reddit'", "delta"),
    "lock a post (moderation log)": ("UPDATE submissions SET locked = true WHERE id = 3; INSERT INTO forum_log_entries "
                                     "(id, forum_id, user_id, submission_id, was_admin, timestamp, action_type) VALUES "
                                     "('55555555-5555-5555-5555-555555555556', 2, 2, 3, true, now(), 'submission_lock')",
                                     "delta"),
    "ban a user": ("INSERT INTO user_bans (id, user_id, banned_by_id, reason, banned, timestamp) VALUES "
                   "('d0000000-0000-0000-0000-000000000001', 3, 2, 'spam', true, now())", "delta"),
    "a sequence moved without a row": ("SELECT nextval('comments_id_seq')", "delta"),
    "TRUNCATE ... CASCADE of a referenced table": ("TRUNCATE forums CASCADE", "delta"),
    "TRUNCATE of a leaf table": ("TRUNCATE comment_votes", "delta"),
    "a migration recorded": ("INSERT INTO doctrine_migration_versions VALUES ('DoctrineMigrations\\Version2099', now(), 1)",
                             "delta"),
    # schema changes
    "dropped search trigger": ("DROP TRIGGER submissions_search_update ON submissions", "full"),
    "disabled search trigger": ("ALTER TABLE comments DISABLE TRIGGER comments_search_update", "full"),
    "replaced search function": ("CREATE OR REPLACE FUNCTION submissions_search_trigger() RETURNS trigger LANGUAGE plpgsql "
                                 "AS $$ BEGIN RETURN new; END $$", "full"),
    "new table": ("CREATE TABLE task_t (id bigserial PRIMARY KEY, x text); INSERT INTO task_t (x) VALUES ('a')", "delta"),
    "dropped table": ("DROP TABLE hidden_forums", "full"),
    "renamed referenced table": ("ALTER TABLE users RENAME TO users_old", "full"),
    "added column": ("ALTER TABLE submissions ADD COLUMN task_extra integer DEFAULT 7", "full"),
    "new index": ("CREATE INDEX task_idx ON comments (timestamp)", "full"),
    "grant": ("GRANT SELECT ON submissions TO PUBLIC", "full"),
    "dropped foreign key": ("ALTER TABLE comments DROP CONSTRAINT fk_5f9e962a727aca70", "full"),
    "dropped sequence (its default with it)": ("DROP SEQUENCE forums_id_seq CASCADE", "full"),
    "new view": ("CREATE VIEW task_v AS SELECT id, title FROM submissions", "delta"),
    "new function": ("CREATE FUNCTION task_f(int) RETURNS int LANGUAGE sql AS 'SELECT $1'", "delta"),
    "new sequence and type": ("CREATE SEQUENCE task_seq; CREATE TYPE task_kind AS ENUM ('a', 'b')", "delta"),
    "new materialized view": ("CREATE MATERIALIZED VIEW task_mv AS SELECT count(*) AS n FROM comments", "delta"),
}


@pytest.fixture(scope="module")
def postmill(engine):
    container = rs.start_postgres(engine, CONTAINER)
    try:
        rs.load_postmill(engine, container, DB)
        stores = rs.site_stores(engine, container, rs.pg_site("reddit", DB))
        stores.snapshot("golden")
        golden = rs.pg_state(engine, container, DB)
        yield engine, container, stores, golden
    finally:
        rs.docker.container.remove(container, force=True)


def test_golden_is_taken_and_nothing_changed_is_nothing(postmill):
    engine, container, stores, golden = postmill
    assert rs.reset(stores) == ("nothing", [], [])
    assert rs.pg_state(engine, container, DB) == golden


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_reset_after_a_mutation_is_exactly_golden(postmill, mutation):
    engine, container, stores, golden = postmill
    rs.pg_mutate_and_reset(engine, container, stores, golden, DB, mutation, *MUTATIONS[mutation])
