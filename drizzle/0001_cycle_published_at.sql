-- Rows stored before this migration keep a null published_at (their publication time is not
-- known); only rows inserted afterwards get the default. Adding the column with the default in
-- one statement would stamp every existing row with the migration's time instead.
ALTER TABLE "fuel_prices" ADD COLUMN "published_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "fuel_prices" ALTER COLUMN "published_at" SET DEFAULT now();
