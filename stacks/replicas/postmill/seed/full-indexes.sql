-- SCALE=full only, beside the indexes of Postmill's own migrations (tiny keeps only those): the listing, user-page and rate-limit queries of
-- app/postmill_replica/ served by index scans at 127,391 submissions / 2,551,513 comments / 661,782 users.
-- Listings: ORDER BY sticky DESC, ranking DESC, id DESC ("hot"), id DESC ("new"), last_active ("active"),
-- net_score ("top"/"controversial"), comment_count ("most_commented"); globally and per forum.
CREATE INDEX submissions_hot_idx ON submissions (sticky, ranking, id);
CREATE INDEX submissions_forum_hot_idx ON submissions (forum_id, sticky, ranking, id);
CREATE INDEX submissions_forum_new_idx ON submissions (forum_id, id);
CREATE INDEX submissions_active_idx ON submissions (last_active, id);
CREATE INDEX submissions_forum_active_idx ON submissions (forum_id, last_active, id);
CREATE INDEX submissions_top_idx ON submissions (net_score, id);
CREATE INDEX submissions_forum_top_idx ON submissions (forum_id, net_score, id);
CREATE INDEX submissions_commented_idx ON submissions (comment_count, id);
CREATE INDEX submissions_forum_commented_idx ON submissions (forum_id, comment_count, id);
-- /user/<name>: WHERE user_id ORDER BY id DESC
CREATE INDEX submissions_user_new_idx ON submissions (user_id, id);
CREATE INDEX comments_user_new_idx ON comments (user_id, id);
-- submission page: WHERE submission_id ORDER BY timestamp, id
CREATE INDEX comments_submission_ts_idx ON comments (submission_id, timestamp, id);
-- content / registration rate limits: timestamp >= now() - interval (Postmill's migrations have
-- submissions_timestamp_idx and comments_timestamp_idx)
CREATE INDEX users_created_idx ON users (created);
-- front page of a logged-in user: forum_subscriptions WHERE user_id
CREATE INDEX forum_subscriptions_user_idx ON forum_subscriptions (user_id);
