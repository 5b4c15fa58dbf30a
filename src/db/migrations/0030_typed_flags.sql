-- Typed flags (issue 28): a flag may serve a value of its type instead of only on or off. Every existing flag is a
-- boolean flag (value_type 'boolean', the other columns null) and evaluates exactly as before.
--
-- variations:        [{key, value, name?, description?}] (non-boolean flags only)
-- default_variation: the variation served while the flag is on, unless a variation rule or variation_split decides
-- off_variation:     the variation served while the flag is off (null: the caller's code default)
-- variation_rules:   [{targeting_rules, variation} | {targeting_rules, split: [{variation, weight}]}], first match wins
-- variation_split:   [{variation, weight}] in place of default_variation
-- Values are kept as sent (json, like targeting_rules); segment_ids also holds the segments the variation rules name.
ALTER TABLE feature_flags
  ADD COLUMN value_type text NOT NULL DEFAULT 'boolean',
  ADD COLUMN variations json,
  ADD COLUMN default_variation text,
  ADD COLUMN off_variation text,
  ADD COLUMN variation_rules json,
  ADD COLUMN variation_split json;
