-- API key lifetimes (issue 27).
--
-- expires_at: optional; past it the key authenticates nowhere. last_used_at: when the key last authenticated,
-- written at most once a minute per key (the write is conditional, so several API processes do not each write).
ALTER TABLE api_keys ADD COLUMN expires_at timestamptz;
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;
