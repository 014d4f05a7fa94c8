-- A small seed on Postmill's migrated schema (../shared/data/schemas/postmill-migrations.sql),
-- written for sitectl's store tests: users, forums with moderators, subscriptions and tags,
-- submissions with comments, votes, flairs and notifications, a message thread, a wiki page, a
-- theme referenced with ON DELETE SET NULL, a forum log entry (SET NULL on its submission) and a
-- hidden forum (ON DELETE CASCADE). Rows go in with the application's triggers firing (the
-- search documents are computed as Postmill's writes compute them); seed(table, row) is
-- tests/stores/data/pg-seed-helper.sql.
SET default_text_search_config = 'pg_catalog.english';

SELECT pg_temp.seed('themes', '{"id": "11111111-1111-1111-1111-111111111111", "config_key": "postmill", "name": "Postmill", "theme_type": "css"}');
SELECT pg_temp.seed('themes', '{"id": "22222222-2222-2222-2222-222222222222", "config_key": "night", "name": "Night", "theme_type": "css"}');
SELECT pg_temp.seed('users', '{"id": 1, "username": "MarvelsGrantMan136", "password": "$2y$13$h", "email": "m@example.com", "created": "2022-06-01 10:00:00+00", "normalized_username": "marvelsgrantman136", "preferred_theme_id": "22222222-2222-2222-2222-222222222222"}');
SELECT pg_temp.seed('users', '{"id": 2, "username": "Sorry_Feed", "password": "$2y$13$h", "email": "s@example.com", "created": "2022-06-02 10:00:00+00", "normalized_username": "sorry_feed", "admin": true}');
SELECT pg_temp.seed('users', '{"id": 3, "username": "jaffa", "password": "$2y$13$h", "email": "j@example.com", "created": "2022-06-03 10:00:00+00", "normalized_username": "jaffa"}');
SELECT setval('users_id_seq', 3);
SELECT pg_temp.seed('forums', '{"id": 1, "name": "books", "normalized_name": "books", "title": "Books", "created": "2022-06-01 10:00:00+00", "suggested_theme_id": "11111111-1111-1111-1111-111111111111", "sidebar": "Read", "description": "Books"}');
SELECT pg_temp.seed('forums', '{"id": 2, "name": "jerseycity", "normalized_name": "jerseycity", "title": "Jersey City", "created": "2022-06-01 10:00:00+00", "sidebar": "JC", "description": "JC"}');
SELECT setval('forums_id_seq', 2);
SELECT pg_temp.seed('moderators', '{"id": "a0000000-0000-0000-0000-000000000001", "forum_id": 1, "user_id": 2, "timestamp": "2022-06-01 10:00:00+00"}');
SELECT pg_temp.seed('forum_subscriptions', '{"id": "b0000000-0000-0000-0000-000000000001", "user_id": 1, "forum_id": 1, "subscribed_at": "2022-06-01 10:00:00+00"}');
SELECT pg_temp.seed('forum_subscriptions', '{"id": "b0000000-0000-0000-0000-000000000002", "user_id": 3, "forum_id": 2, "subscribed_at": "2022-06-01 10:00:00+00"}');
SELECT pg_temp.seed('hidden_forums', '{"user_id": 3, "forum_id": 1}');
INSERT INTO forum_tags (id, name, normalized_name) VALUES ('33333333-3333-3333-3333-333333333333', 'Reading', 'reading');
INSERT INTO forums_tags (forum_id, tag_id) VALUES (1, '33333333-3333-3333-3333-333333333333');
SELECT pg_temp.seed('submissions', '{"id": 1, "forum_id": 1, "user_id": 1, "title": "Harry Potter is overrated", "timestamp": "2022-06-05 10:00:00+00", "media_type": "url", "url": "http://example.com/hp", "body": "Discuss.", "visibility": "visible", "net_score": 2}');
SELECT pg_temp.seed('submissions', '{"id": 2, "forum_id": 1, "user_id": 3, "title": "Best sci-fi of 2022", "timestamp": "2022-06-06 10:00:00+00", "media_type": "url", "body": "List yours", "visibility": "visible", "net_score": 1}');
SELECT pg_temp.seed('submissions', '{"id": 3, "forum_id": 2, "user_id": 2, "title": "PATH trains delayed", "timestamp": "2022-06-07 10:00:00+00", "media_type": "url", "visibility": "visible", "net_score": 0}');
SELECT setval('submissions_id_seq', 3);
SELECT pg_temp.seed('comments', '{"id": 1, "user_id": 2, "submission_id": 1, "body": "Agreed", "timestamp": "2022-06-05 11:00:00+00", "visibility": "visible", "net_score": 1}');
SELECT pg_temp.seed('comments', '{"id": 2, "user_id": 3, "submission_id": 1, "parent_id": 1, "body": "Not at all", "timestamp": "2022-06-05 12:00:00+00", "visibility": "visible", "net_score": 0}');
SELECT pg_temp.seed('comments', '{"id": 3, "user_id": 1, "submission_id": 2, "body": "Dune", "timestamp": "2022-06-06 11:00:00+00", "visibility": "visible", "net_score": 0}');
SELECT setval('comments_id_seq', 3);
SELECT pg_temp.seed('submission_votes', '{"id": 1, "user_id": 2, "submission_id": 1, "upvote": true, "timestamp": "2022-06-05 10:30:00+00"}');
SELECT pg_temp.seed('submission_votes', '{"id": 2, "user_id": 3, "submission_id": 1, "upvote": true, "timestamp": "2022-06-05 10:31:00+00"}');
SELECT pg_temp.seed('submission_votes', '{"id": 3, "user_id": 1, "submission_id": 2, "upvote": true, "timestamp": "2022-06-06 10:30:00+00"}');
SELECT setval('submission_votes_id_seq', 3);
SELECT pg_temp.seed('comment_votes', '{"id": 1, "user_id": 1, "comment_id": 1, "upvote": true, "timestamp": "2022-06-05 11:30:00+00"}');
SELECT setval('comment_votes_id_seq', 1);
SELECT pg_temp.seed('notifications', '{"id": "c0000000-0000-0000-0000-000000000001", "user_id": 2, "comment_id": 2, "notification_type": "comment", "timestamp": "2022-06-05 12:00:00+00"}');
INSERT INTO flairs (id, flair_type, label_text) VALUES ('44444444-4444-4444-4444-444444444444', 'text', 'Hot take');
INSERT INTO submissions_flairs (submission_id, flair_id) VALUES (1, '44444444-4444-4444-4444-444444444444');
SELECT pg_temp.seed('forum_log_entries', '{"id": "55555555-5555-5555-5555-555555555555", "forum_id": 1, "user_id": 2, "author_id": 1, "submission_id": 2, "was_admin": true, "timestamp": "2022-06-06 12:00:00+00", "action_type": "submission_lock", "title": "Best sci-fi of 2022"}');
SELECT pg_temp.seed('message_threads', '{"id": 1}');
SELECT setval('message_threads_id_seq', 1);
INSERT INTO message_thread_participants (message_thread_id, user_id) VALUES (1, 1), (1, 3);
SELECT pg_temp.seed('messages', '{"id": "66666666-6666-6666-6666-666666666666", "sender_id": 1, "thread_id": 1, "body": "Hi there", "timestamp": "2022-06-08 10:00:00+00"}');
SELECT pg_temp.seed('wiki_pages', '{"id": 1, "path": "rules", "normalized_path": "rules"}');
SELECT pg_temp.seed('wiki_revisions', '{"id": "77777777-7777-7777-7777-777777777777", "page_id": 1, "user_id": 2, "title": "Rules", "body": "Be nice", "timestamp": "2022-06-01 10:00:00+00"}');
SELECT setval('wiki_pages_id_seq', 1);
SELECT pg_temp.seed('sites', '{"id": "88888888-8888-8888-8888-888888888888", "site_name": "Postmill"}');
ANALYZE;
