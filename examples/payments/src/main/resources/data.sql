-- Demo merchants and wallets; inserted only if missing.
-- Api-Key: sk_test_acme
INSERT INTO pay_merchants (id, api_key_sha256) SELECT 'acme', '0c24ce40313b1ce2b6daefa9dea10a4d3290af661123f6d499a3567b80d5ed49' WHERE NOT EXISTS (SELECT 1 FROM pay_merchants WHERE id = 'acme');
-- Api-Key: sk_test_globex
INSERT INTO pay_merchants (id, api_key_sha256) SELECT 'globex', 'd588a5beb7a21e90ab68a64c0db32cee0d9a75aaec9a8e4ab3f5008f56f84e91' WHERE NOT EXISTS (SELECT 1 FROM pay_merchants WHERE id = 'globex');
INSERT INTO pay_accounts (id, merchant_id, currency, balance) SELECT 'acme_main', 'acme', 'EUR', 1000000 WHERE NOT EXISTS (SELECT 1 FROM pay_accounts WHERE id = 'acme_main');
INSERT INTO pay_accounts (id, merchant_id, currency, balance) SELECT 'acme_payouts', 'acme', 'EUR', 0 WHERE NOT EXISTS (SELECT 1 FROM pay_accounts WHERE id = 'acme_payouts');
INSERT INTO pay_accounts (id, merchant_id, currency, balance) SELECT 'globex_main', 'globex', 'EUR', 500000 WHERE NOT EXISTS (SELECT 1 FROM pay_accounts WHERE id = 'globex_main');
INSERT INTO pay_accounts (id, merchant_id, currency, balance) SELECT 'globex_payouts', 'globex', 'EUR', 0 WHERE NOT EXISTS (SELECT 1 FROM pay_accounts WHERE id = 'globex_payouts');
