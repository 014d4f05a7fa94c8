-- The replica's additions to Magento 2.4.8's own structure (the install dump that
-- build-seed.sh loads): two lookup indexes the real Magento does without, because it
-- searches through Elasticsearch and reads review summaries from its indexes; the replica
-- has neither, and looks both up in SQL at SCALE=full. docs/contracts/magento.md names them.
CREATE INDEX REPLICA_CATALOG_PRODUCT_ENTITY_VARCHAR_ATTRIBUTE_ID_VALUE ON catalog_product_entity_varchar (attribute_id, value);
CREATE INDEX REPLICA_RATING_OPTION_VOTE_ENTITY_PK_VALUE ON rating_option_vote (entity_pk_value);
