INSERT INTO customer_entity (entity_id, website_id, email, group_id, store_id, firstname, lastname, created_in) VALUES
 (1, 1, 'emma.lopez@example.com', 1, 1, 'Emma', 'Lopez', 'Default Store View'),
 (2, 1, 'john.smith@example.com', 1, 1, 'John', 'Smith', 'Default Store View'),
 (3, 1, 'ana.silva@example.com', 1, 1, 'Ana', 'Silva', 'Default Store View');
INSERT INTO customer_address_entity (entity_id, parent_id, city, country_id, firstname, lastname, street, telephone, postcode) VALUES
 (1, 1, 'Boston', 'US', 'Emma', 'Lopez', '1 Main St', '555-0100', '02110'),
 (2, 2, 'Denver', 'US', 'John', 'Smith', '9 Elm St', '555-0101', '80202');
INSERT INTO review (review_id, entity_id, entity_pk_value, status_id) VALUES (1, 1, 5, 1), (2, 1, 9, 1), (3, 1, 8, 2);
INSERT INTO review_detail (detail_id, review_id, store_id, title, detail, nickname, customer_id) VALUES
 (1, 1, 1, 'Great', 'Loved it', 'emma', 1), (2, 2, 1, 'OK', 'Fine', 'john', 2), (3, 3, 1, 'Meh', 'Not for me', 'ana', 3);
INSERT INTO review_store (review_id, store_id) VALUES (1, 0), (1, 1), (2, 0), (2, 1), (3, 1);
INSERT INTO sales_order (entity_id, state, status, store_id, customer_id, customer_email, increment_id, grand_total, base_grand_total, created_at) VALUES
 (1, 'complete', 'complete', 1, 1, 'emma.lopez@example.com', '000000001', 120.00, 120.00, '2023-03-01 10:00:00'),
 (2, 'processing', 'processing', 1, 2, 'john.smith@example.com', '000000002', 45.50, 45.50, '2023-03-02 11:00:00'),
 (3, 'pending', 'pending', 1, 1, 'emma.lopez@example.com', '000000003', 19.99, 19.99, '2023-03-03 12:00:00');
INSERT INTO sales_order_item (item_id, order_id, store_id, product_id, sku, name, qty_ordered, price, row_total) VALUES
 (1, 1, 1, 5, 'Blusa', 'Blusa', 2, 60, 120), (2, 2, 1, 9, 'Bolsa', 'Bolsa', 1, 45.5, 45.5), (3, 3, 1, 8, 'Shopper', 'Shopper', 1, 19.99, 19.99);
INSERT INTO sales_order_address (entity_id, parent_id, address_type, city, country_id, firstname, lastname, street, telephone, postcode) VALUES
 (1, 1, 'billing', 'Boston', 'US', 'Emma', 'Lopez', '1 Main St', '555-0100', '02110'),
 (2, 1, 'shipping', 'Boston', 'US', 'Emma', 'Lopez', '1 Main St', '555-0100', '02110'),
 (3, 2, 'billing', 'Denver', 'US', 'John', 'Smith', '9 Elm St', '555-0101', '80202');
INSERT INTO sales_order_payment (entity_id, parent_id, method) VALUES (1, 1, 'checkmo'), (2, 2, 'checkmo'), (3, 3, 'checkmo');
INSERT INTO sales_order_status_history (entity_id, parent_id, comment, status, entity_name) VALUES
 (1, 1, 'Shipped', 'complete', 'order'), (2, 2, 'Paid', 'processing', 'order');
INSERT INTO sales_order_grid (entity_id, status, store_id, customer_id, increment_id, grand_total) VALUES
 (1, 'complete', 1, 1, '000000001', 120), (2, 'processing', 1, 2, '000000002', 45.5), (3, 'pending', 1, 1, '000000003', 19.99);
INSERT INTO wishlist (wishlist_id, customer_id, shared, sharing_code) VALUES (1, 1, 0, 'abc'), (2, 2, 0, 'def');
INSERT INTO wishlist_item (wishlist_item_id, wishlist_id, product_id, store_id, qty) VALUES (1, 1, 5, 1, 1), (2, 1, 9, 1, 1), (3, 2, 8, 1, 1);
INSERT INTO quote (entity_id, store_id, customer_id, is_active) VALUES (10, 1, 1, 1);
INSERT INTO quote_item (item_id, quote_id, product_id, store_id, sku, qty) VALUES (10, 10, 5, 1, 'Blusa', 1);
-- Schema objects beside the tables (the real install has none; a site's own may have some).
CREATE VIEW report_order_totals AS SELECT customer_id, COUNT(*) AS orders, SUM(grand_total) AS total FROM sales_order GROUP BY customer_id;
CREATE VIEW report_big_spenders AS SELECT customer_id FROM report_order_totals WHERE total > 100;
CREATE FUNCTION order_total(id INT) RETURNS DECIMAL(20,4) READS SQL DATA RETURN (SELECT grand_total FROM sales_order WHERE entity_id = id);
CREATE PROCEDURE touch_order(IN id INT) MODIFIES SQL DATA UPDATE sales_order SET updated_at = updated_at WHERE entity_id = id;
CREATE EVENT purge_old_quotes ON SCHEDULE EVERY 1 DAY STARTS '2023-01-01 03:00:00' DISABLE DO DELETE FROM quote WHERE is_active = 0;
