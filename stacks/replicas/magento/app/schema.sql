-- Magento 2.4-shaped schema subset (replica). Column names follow contract-magento.md §4.
CREATE TABLE core_config_data (config_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, scope VARCHAR(8) NOT NULL DEFAULT 'default',
  scope_id INT NOT NULL DEFAULT 0, path VARCHAR(255) NOT NULL DEFAULT 'general', value TEXT NULL,
  updated_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, UNIQUE KEY (scope, scope_id, path));
CREATE TABLE store_website (website_id SMALLINT UNSIGNED PRIMARY KEY, code VARCHAR(32), name VARCHAR(64), default_group_id SMALLINT UNSIGNED, is_default SMALLINT);
CREATE TABLE store (store_id SMALLINT UNSIGNED PRIMARY KEY, code VARCHAR(32) UNIQUE, website_id SMALLINT UNSIGNED, group_id SMALLINT UNSIGNED, name VARCHAR(255), sort_order SMALLINT, is_active SMALLINT);
CREATE TABLE session (session_id VARCHAR(255) PRIMARY KEY, session_expires INT UNSIGNED NOT NULL DEFAULT 0, session_data MEDIUMBLOB NOT NULL);
CREATE TABLE admin_user (user_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, firstname VARCHAR(32), lastname VARCHAR(32), email VARCHAR(128),
  username VARCHAR(40) UNIQUE, password VARCHAR(255) NOT NULL, created TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, modified TIMESTAMP NULL,
  logdate TIMESTAMP NULL, lognum SMALLINT UNSIGNED NOT NULL DEFAULT 0, reload_acl_flag SMALLINT NOT NULL DEFAULT 0, is_active SMALLINT NOT NULL DEFAULT 1,
  extra TEXT, rp_token TEXT, rp_token_created_at TIMESTAMP NULL, interface_locale VARCHAR(16) NOT NULL DEFAULT 'en_US',
  failures_num SMALLINT DEFAULT 0, first_failure TIMESTAMP NULL, lock_expires TIMESTAMP NULL);
CREATE TABLE admin_passwords (password_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, user_id INT UNSIGNED NOT NULL, password_hash VARCHAR(255),
  expires INT UNSIGNED NOT NULL DEFAULT 0, last_updated INT UNSIGNED NOT NULL DEFAULT 0);
CREATE TABLE jwt_auth_revoked (user_type_id INT UNSIGNED NOT NULL, user_id INT UNSIGNED NOT NULL, revoke_before BIGINT UNSIGNED NOT NULL, PRIMARY KEY (user_type_id, user_id));
CREATE TABLE customer_entity (entity_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, website_id SMALLINT UNSIGNED, email VARCHAR(255), group_id SMALLINT UNSIGNED NOT NULL DEFAULT 1,
  increment_id VARCHAR(50), store_id SMALLINT UNSIGNED DEFAULT 1, created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
  is_active SMALLINT UNSIGNED NOT NULL DEFAULT 1, disable_auto_group_change SMALLINT UNSIGNED NOT NULL DEFAULT 0, created_in VARCHAR(255), prefix VARCHAR(40),
  firstname VARCHAR(255), middlename VARCHAR(255), lastname VARCHAR(255), suffix VARCHAR(40), dob DATE, password_hash VARCHAR(128), rp_token VARCHAR(128),
  rp_token_created_at DATETIME, default_billing INT UNSIGNED, default_shipping INT UNSIGNED, taxvat VARCHAR(50), confirmation VARCHAR(64), gender SMALLINT UNSIGNED,
  failures_num SMALLINT DEFAULT 0, first_failure TIMESTAMP NULL, lock_expires TIMESTAMP NULL, UNIQUE KEY (email, website_id));
CREATE TABLE customer_address_entity (entity_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, parent_id INT UNSIGNED, created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, is_active SMALLINT UNSIGNED NOT NULL DEFAULT 1, city VARCHAR(255), company VARCHAR(255), country_id VARCHAR(255),
  firstname VARCHAR(255), lastname VARCHAR(255), postcode VARCHAR(255), region VARCHAR(255), region_id INT UNSIGNED, street TEXT, telephone VARCHAR(255));
CREATE TABLE newsletter_subscriber (subscriber_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, store_id SMALLINT UNSIGNED DEFAULT 1, change_status_at TIMESTAMP NULL,
  customer_id INT UNSIGNED NOT NULL DEFAULT 0, subscriber_email VARCHAR(150), subscriber_status INT NOT NULL DEFAULT 0, subscriber_confirm_code VARCHAR(32));
CREATE TABLE eav_entity_type (entity_type_id SMALLINT UNSIGNED PRIMARY KEY, entity_type_code VARCHAR(50) NOT NULL);
CREATE TABLE eav_attribute (attribute_id SMALLINT UNSIGNED PRIMARY KEY, entity_type_id SMALLINT UNSIGNED NOT NULL, attribute_code VARCHAR(255) NOT NULL,
  backend_type VARCHAR(8) NOT NULL DEFAULT 'static', frontend_input VARCHAR(50), frontend_label VARCHAR(255), is_required SMALLINT NOT NULL DEFAULT 0,
  is_user_defined SMALLINT NOT NULL DEFAULT 0, default_value TEXT, is_unique SMALLINT NOT NULL DEFAULT 0, UNIQUE KEY (entity_type_id, attribute_code));
CREATE TABLE catalog_product_entity (entity_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, attribute_set_id SMALLINT UNSIGNED NOT NULL DEFAULT 4,
  type_id VARCHAR(32) NOT NULL DEFAULT 'simple', sku VARCHAR(64), has_options SMALLINT NOT NULL DEFAULT 0, required_options SMALLINT UNSIGNED NOT NULL DEFAULT 0,
  created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, KEY (sku));
CREATE TABLE catalog_product_entity_varchar (value_id INT AUTO_INCREMENT PRIMARY KEY, attribute_id SMALLINT UNSIGNED NOT NULL, store_id SMALLINT UNSIGNED NOT NULL DEFAULT 0,
  entity_id INT UNSIGNED NOT NULL, value VARCHAR(255), UNIQUE KEY (entity_id, attribute_id, store_id));
CREATE TABLE catalog_product_entity_int (value_id INT AUTO_INCREMENT PRIMARY KEY, attribute_id SMALLINT UNSIGNED NOT NULL, store_id SMALLINT UNSIGNED NOT NULL DEFAULT 0,
  entity_id INT UNSIGNED NOT NULL, value INT, UNIQUE KEY (entity_id, attribute_id, store_id));
CREATE TABLE catalog_product_entity_decimal (value_id INT AUTO_INCREMENT PRIMARY KEY, attribute_id SMALLINT UNSIGNED NOT NULL, store_id SMALLINT UNSIGNED NOT NULL DEFAULT 0,
  entity_id INT UNSIGNED NOT NULL, value DECIMAL(20,6), UNIQUE KEY (entity_id, attribute_id, store_id));
CREATE TABLE catalog_product_entity_text (value_id INT AUTO_INCREMENT PRIMARY KEY, attribute_id SMALLINT UNSIGNED NOT NULL, store_id SMALLINT UNSIGNED NOT NULL DEFAULT 0,
  entity_id INT UNSIGNED NOT NULL, value MEDIUMTEXT, UNIQUE KEY (entity_id, attribute_id, store_id));
CREATE TABLE catalog_product_entity_datetime (value_id INT AUTO_INCREMENT PRIMARY KEY, attribute_id SMALLINT UNSIGNED NOT NULL, store_id SMALLINT UNSIGNED NOT NULL DEFAULT 0,
  entity_id INT UNSIGNED NOT NULL, value DATETIME, UNIQUE KEY (entity_id, attribute_id, store_id));
CREATE TABLE catalog_product_super_link (link_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, product_id INT UNSIGNED NOT NULL, parent_id INT UNSIGNED NOT NULL);
CREATE TABLE catalog_product_website (product_id INT UNSIGNED NOT NULL, website_id SMALLINT UNSIGNED NOT NULL, PRIMARY KEY (product_id, website_id));
CREATE TABLE catalog_category_entity (entity_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, attribute_set_id SMALLINT UNSIGNED NOT NULL DEFAULT 3, parent_id INT UNSIGNED NOT NULL DEFAULT 0,
  created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, path VARCHAR(255), position INT NOT NULL DEFAULT 0,
  level INT NOT NULL DEFAULT 0, children_count INT NOT NULL DEFAULT 0);
CREATE TABLE catalog_category_entity_varchar (value_id INT AUTO_INCREMENT PRIMARY KEY, attribute_id SMALLINT UNSIGNED NOT NULL, store_id SMALLINT UNSIGNED NOT NULL DEFAULT 0,
  entity_id INT UNSIGNED NOT NULL, value VARCHAR(255), UNIQUE KEY (entity_id, attribute_id, store_id));
CREATE TABLE catalog_category_product (entity_id INT AUTO_INCREMENT PRIMARY KEY, category_id INT UNSIGNED NOT NULL, product_id INT UNSIGNED NOT NULL, position INT NOT NULL DEFAULT 0);
CREATE TABLE cataloginventory_stock_item (item_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, product_id INT UNSIGNED NOT NULL, stock_id SMALLINT UNSIGNED NOT NULL DEFAULT 1,
  qty DECIMAL(12,4), min_qty DECIMAL(12,4) NOT NULL DEFAULT 0, use_config_min_qty SMALLINT UNSIGNED NOT NULL DEFAULT 1, is_qty_decimal SMALLINT UNSIGNED NOT NULL DEFAULT 0,
  backorders SMALLINT UNSIGNED NOT NULL DEFAULT 0, use_config_backorders SMALLINT UNSIGNED NOT NULL DEFAULT 1, min_sale_qty DECIMAL(12,4) NOT NULL DEFAULT 1,
  max_sale_qty DECIMAL(12,4) NOT NULL DEFAULT 10000, is_in_stock SMALLINT UNSIGNED NOT NULL DEFAULT 0, low_stock_date TIMESTAMP NULL, notify_stock_qty DECIMAL(12,4),
  manage_stock SMALLINT UNSIGNED NOT NULL DEFAULT 0, use_config_manage_stock SMALLINT UNSIGNED NOT NULL DEFAULT 1, website_id SMALLINT UNSIGNED NOT NULL DEFAULT 0,
  UNIQUE KEY (product_id, stock_id));
CREATE TABLE cataloginventory_stock_status (product_id INT UNSIGNED NOT NULL, website_id SMALLINT UNSIGNED NOT NULL, stock_id SMALLINT UNSIGNED NOT NULL, qty DECIMAL(12,4) NOT NULL DEFAULT 0,
  stock_status SMALLINT UNSIGNED NOT NULL, PRIMARY KEY (product_id, website_id, stock_id));
CREATE TABLE url_rewrite (url_rewrite_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, entity_type VARCHAR(32) NOT NULL, entity_id INT UNSIGNED NOT NULL,
  request_path VARCHAR(255), target_path VARCHAR(255), redirect_type SMALLINT UNSIGNED NOT NULL DEFAULT 0, store_id SMALLINT UNSIGNED NOT NULL,
  description VARCHAR(255), is_autogenerated SMALLINT UNSIGNED NOT NULL DEFAULT 0, metadata VARCHAR(255), UNIQUE KEY (request_path, store_id));
CREATE TABLE quote (entity_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, store_id SMALLINT UNSIGNED NOT NULL DEFAULT 1, created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, is_active SMALLINT UNSIGNED DEFAULT 1, customer_id INT UNSIGNED, customer_email VARCHAR(255),
  customer_firstname VARCHAR(255), customer_lastname VARCHAR(255), customer_is_guest SMALLINT UNSIGNED DEFAULT 0, items_count INT UNSIGNED DEFAULT 0,
  items_qty DECIMAL(12,4) DEFAULT 0, grand_total DECIMAL(20,4) DEFAULT 0, subtotal DECIMAL(20,4), reserved_order_id VARCHAR(64), base_currency_code VARCHAR(255) DEFAULT 'USD',
  quote_currency_code VARCHAR(255) DEFAULT 'USD');
CREATE TABLE quote_item (item_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, quote_id INT UNSIGNED NOT NULL, created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, product_id INT UNSIGNED, store_id SMALLINT UNSIGNED DEFAULT 1, parent_item_id INT UNSIGNED, sku VARCHAR(255),
  name VARCHAR(255), qty DECIMAL(12,4) NOT NULL DEFAULT 0, price DECIMAL(12,4) NOT NULL DEFAULT 0, row_total DECIMAL(20,4) NOT NULL DEFAULT 0, product_type VARCHAR(255));
CREATE TABLE sales_sequence_meta (meta_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, entity_type VARCHAR(32) NOT NULL, store_id SMALLINT UNSIGNED NOT NULL, sequence_table VARCHAR(64) NOT NULL);
CREATE TABLE sales_sequence_profile (profile_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, meta_id INT UNSIGNED NOT NULL, prefix VARCHAR(32), suffix VARCHAR(32),
  start_value INT UNSIGNED NOT NULL DEFAULT 1, step INT UNSIGNED NOT NULL DEFAULT 1, max_value INT UNSIGNED NOT NULL, warning_value INT UNSIGNED NOT NULL, is_active SMALLINT NOT NULL DEFAULT 0);
CREATE TABLE sequence_order_0 (sequence_value INT UNSIGNED AUTO_INCREMENT PRIMARY KEY);
CREATE TABLE sequence_order_1 (sequence_value INT UNSIGNED AUTO_INCREMENT PRIMARY KEY);
CREATE TABLE sales_order (entity_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, state VARCHAR(32), status VARCHAR(32), increment_id VARCHAR(50), store_id SMALLINT UNSIGNED,
  customer_id INT UNSIGNED, customer_email VARCHAR(128), customer_firstname VARCHAR(128), customer_lastname VARCHAR(128), customer_is_guest SMALLINT UNSIGNED DEFAULT 0,
  customer_group_id INT, grand_total DECIMAL(20,4), base_grand_total DECIMAL(20,4), subtotal DECIMAL(20,4), shipping_amount DECIMAL(20,4), tax_amount DECIMAL(20,4),
  discount_amount DECIMAL(20,4), total_qty_ordered DECIMAL(12,4), total_paid DECIMAL(20,4), total_refunded DECIMAL(20,4), quote_id INT UNSIGNED,
  billing_address_id INT, shipping_address_id INT, shipping_method VARCHAR(120), shipping_description VARCHAR(255), order_currency_code VARCHAR(3) DEFAULT 'USD',
  base_currency_code VARCHAR(3) DEFAULT 'USD', store_name VARCHAR(255), remote_ip VARCHAR(45), customer_note TEXT, created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, total_item_count SMALLINT UNSIGNED NOT NULL DEFAULT 0, coupon_code VARCHAR(255), applied_rule_ids VARCHAR(128),
  UNIQUE KEY (increment_id, store_id));
CREATE TABLE sales_order_grid (entity_id INT UNSIGNED PRIMARY KEY, status VARCHAR(32), store_id SMALLINT UNSIGNED, store_name VARCHAR(255), customer_id INT UNSIGNED,
  base_grand_total DECIMAL(20,4), base_total_paid DECIMAL(20,4), grand_total DECIMAL(20,4), total_paid DECIMAL(20,4), increment_id VARCHAR(50), base_currency_code VARCHAR(3),
  order_currency_code VARCHAR(255), shipping_name VARCHAR(255), billing_name VARCHAR(255), created_at TIMESTAMP NULL, updated_at TIMESTAMP NULL, billing_address VARCHAR(255),
  shipping_address VARCHAR(255), shipping_information VARCHAR(255), customer_email VARCHAR(255), customer_group VARCHAR(255), subtotal DECIMAL(20,4),
  shipping_and_handling DECIMAL(20,4), customer_name VARCHAR(255), payment_method VARCHAR(255), total_refunded DECIMAL(20,4));
CREATE TABLE sales_order_item (item_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, order_id INT UNSIGNED NOT NULL, parent_item_id INT UNSIGNED, quote_item_id INT UNSIGNED,
  store_id SMALLINT UNSIGNED, created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, product_id INT UNSIGNED,
  product_type VARCHAR(255), product_options LONGTEXT, sku VARCHAR(255), name VARCHAR(255), qty_ordered DECIMAL(12,4) DEFAULT 0, qty_invoiced DECIMAL(12,4) DEFAULT 0,
  qty_shipped DECIMAL(12,4) DEFAULT 0, qty_canceled DECIMAL(12,4) DEFAULT 0, qty_refunded DECIMAL(12,4) DEFAULT 0, price DECIMAL(12,4) NOT NULL DEFAULT 0,
  base_price DECIMAL(12,4) NOT NULL DEFAULT 0, original_price DECIMAL(12,4), row_total DECIMAL(20,4) NOT NULL DEFAULT 0, tax_amount DECIMAL(20,4) DEFAULT 0, discount_amount DECIMAL(20,4) DEFAULT 0);
CREATE TABLE sales_order_address (entity_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, parent_id INT UNSIGNED, address_type VARCHAR(255), firstname VARCHAR(255), lastname VARCHAR(255),
  street VARCHAR(255), city VARCHAR(255), region VARCHAR(255), region_id INT, postcode VARCHAR(255), country_id VARCHAR(2), telephone VARCHAR(255), email VARCHAR(255), company VARCHAR(255));
CREATE TABLE sales_order_payment (entity_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, parent_id INT UNSIGNED NOT NULL, method VARCHAR(128), amount_ordered DECIMAL(20,4));
CREATE TABLE sales_order_status_history (entity_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, parent_id INT UNSIGNED NOT NULL, is_customer_notified INT,
  is_visible_on_front SMALLINT UNSIGNED NOT NULL DEFAULT 0, comment TEXT, status VARCHAR(32), created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, entity_name VARCHAR(32));
CREATE TABLE review_entity (entity_id SMALLINT UNSIGNED PRIMARY KEY, entity_code VARCHAR(32) NOT NULL);
CREATE TABLE review_status (status_id SMALLINT UNSIGNED PRIMARY KEY, status_code VARCHAR(32) NOT NULL);
CREATE TABLE review (review_id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, entity_id SMALLINT UNSIGNED NOT NULL DEFAULT 0,
  entity_pk_value INT UNSIGNED NOT NULL DEFAULT 0, status_id SMALLINT UNSIGNED NOT NULL DEFAULT 0);
CREATE TABLE review_detail (detail_id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, review_id BIGINT UNSIGNED NOT NULL, store_id SMALLINT UNSIGNED DEFAULT 0,
  title VARCHAR(255) NOT NULL, detail TEXT NOT NULL, nickname VARCHAR(128) NOT NULL, customer_id INT UNSIGNED);
CREATE TABLE review_store (review_id BIGINT UNSIGNED NOT NULL, store_id SMALLINT UNSIGNED NOT NULL, PRIMARY KEY (review_id, store_id));
CREATE TABLE review_entity_summary (primary_id BIGINT AUTO_INCREMENT PRIMARY KEY, entity_pk_value BIGINT NOT NULL DEFAULT 0, entity_type SMALLINT NOT NULL DEFAULT 0,
  reviews_count SMALLINT NOT NULL DEFAULT 0, rating_summary SMALLINT NOT NULL DEFAULT 0, store_id SMALLINT UNSIGNED NOT NULL DEFAULT 0);
CREATE TABLE rating_entity (entity_id SMALLINT UNSIGNED PRIMARY KEY, entity_code VARCHAR(64) NOT NULL);
CREATE TABLE rating (rating_id SMALLINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, entity_id SMALLINT UNSIGNED NOT NULL DEFAULT 0, rating_code VARCHAR(64) NOT NULL UNIQUE,
  position SMALLINT UNSIGNED NOT NULL DEFAULT 0, is_active SMALLINT NOT NULL DEFAULT 1);
CREATE TABLE rating_store (rating_id SMALLINT UNSIGNED NOT NULL, store_id SMALLINT UNSIGNED NOT NULL, PRIMARY KEY (rating_id, store_id));
CREATE TABLE rating_option (option_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, rating_id SMALLINT UNSIGNED NOT NULL, code VARCHAR(32) NOT NULL, value SMALLINT UNSIGNED NOT NULL, position SMALLINT UNSIGNED NOT NULL);
CREATE TABLE rating_option_vote (vote_id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, option_id INT UNSIGNED NOT NULL, remote_ip VARCHAR(16), remote_ip_long VARBINARY(16),
  customer_id INT UNSIGNED, entity_pk_value BIGINT UNSIGNED NOT NULL, rating_id SMALLINT UNSIGNED NOT NULL, review_id BIGINT UNSIGNED, percent SMALLINT NOT NULL, value SMALLINT NOT NULL);
CREATE TABLE wishlist (wishlist_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, customer_id INT UNSIGNED UNIQUE, shared SMALLINT UNSIGNED NOT NULL DEFAULT 0, sharing_code VARCHAR(32), updated_at TIMESTAMP NULL);
CREATE TABLE wishlist_item (wishlist_item_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, wishlist_id INT UNSIGNED NOT NULL, product_id INT UNSIGNED NOT NULL, store_id SMALLINT UNSIGNED,
  added_at TIMESTAMP NULL, description TEXT, qty DECIMAL(12,4) NOT NULL);
CREATE TABLE cms_page (page_id SMALLINT AUTO_INCREMENT PRIMARY KEY, title VARCHAR(255), page_layout VARCHAR(255), identifier VARCHAR(100), content MEDIUMTEXT,
  creation_time TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, update_time TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, is_active SMALLINT NOT NULL DEFAULT 1);
CREATE TABLE indexer_state (state_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, indexer_id VARCHAR(255) UNIQUE, status VARCHAR(16) DEFAULT 'invalid', updated DATETIME, hash_config VARCHAR(32) NOT NULL DEFAULT '');
CREATE TABLE mview_state (state_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, view_id VARCHAR(255) UNIQUE, mode VARCHAR(16) DEFAULT 'disabled', status VARCHAR(16) DEFAULT 'idle', updated DATETIME, version_id INT UNSIGNED);
-- Magento's cron bookkeeping (columns and index as Magento 2.4's cron_schedule), written by the replica's cron (bin/magento cron:run).
CREATE TABLE cron_schedule (schedule_id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, job_code VARCHAR(255) NOT NULL DEFAULT '0', status VARCHAR(7) NOT NULL DEFAULT 'pending',
  messages TEXT, created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, scheduled_at TIMESTAMP NULL DEFAULT NULL, executed_at TIMESTAMP NULL DEFAULT NULL,
  finished_at TIMESTAMP NULL DEFAULT NULL, KEY CRON_SCHEDULE_JOB_CODE_STATUS_SCHEDULED_AT (job_code, status, scheduled_at));
-- Lookup indexes (Magento has equivalents): keep storefront/admin/REST lookups fast at SCALE=full.
CREATE INDEX idx_cpev_attr_value ON catalog_product_entity_varchar (attribute_id, value);
CREATE INDEX idx_super_link_product ON catalog_product_super_link (product_id);
CREATE INDEX idx_super_link_parent ON catalog_product_super_link (parent_id);
CREATE INDEX idx_category_path ON catalog_category_entity (path);
CREATE INDEX idx_category_parent ON catalog_category_entity (parent_id);
CREATE UNIQUE INDEX idx_ccp_category_product ON catalog_category_product (category_id, product_id);
CREATE INDEX idx_ccp_product ON catalog_category_product (product_id);
CREATE INDEX idx_url_rewrite_entity ON url_rewrite (entity_id, entity_type);
CREATE INDEX idx_customer_address_parent ON customer_address_entity (parent_id);
CREATE INDEX idx_newsletter_customer ON newsletter_subscriber (customer_id);
CREATE INDEX idx_newsletter_email ON newsletter_subscriber (subscriber_email);
CREATE INDEX idx_quote_customer ON quote (customer_id, is_active);
CREATE INDEX idx_quote_item_quote ON quote_item (quote_id);
CREATE INDEX idx_sales_order_created_at ON sales_order (created_at);
CREATE INDEX idx_sales_order_updated_at ON sales_order (updated_at);
CREATE INDEX idx_sales_order_customer ON sales_order (customer_id);
CREATE INDEX idx_sales_order_status ON sales_order (status);
CREATE INDEX idx_sales_order_grid_created_at ON sales_order_grid (created_at);
CREATE INDEX idx_sales_order_grid_customer ON sales_order_grid (customer_id);
CREATE INDEX idx_sales_order_item_order ON sales_order_item (order_id);
CREATE INDEX idx_sales_order_item_product ON sales_order_item (product_id);
CREATE INDEX idx_sales_order_address_parent ON sales_order_address (parent_id);
CREATE INDEX idx_sales_order_payment_parent ON sales_order_payment (parent_id);
CREATE INDEX idx_sales_order_history_parent ON sales_order_status_history (parent_id, created_at);
CREATE INDEX idx_review_product ON review (entity_id, entity_pk_value, status_id);
CREATE INDEX idx_review_pk_value ON review (entity_pk_value);
CREATE INDEX idx_review_detail_review ON review_detail (review_id);
CREATE INDEX idx_review_detail_customer ON review_detail (customer_id);
CREATE INDEX idx_review_summary_entity ON review_entity_summary (entity_pk_value, store_id);
CREATE INDEX idx_rating_vote_review ON rating_option_vote (review_id);
CREATE INDEX idx_rating_vote_pk_value ON rating_option_vote (entity_pk_value);
CREATE INDEX idx_wishlist_item_wishlist ON wishlist_item (wishlist_id);
