-- A connection whose settings changed where or how it signs in keeps no credentials until new ones are sent
-- (issue #27): NULL means "dropped", shown as needs_new_credentials.
ALTER TABLE warehouse_connections ALTER COLUMN encrypted_credentials DROP NOT NULL;
