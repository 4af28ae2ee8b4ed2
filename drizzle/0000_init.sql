CREATE TABLE "fuel_prices" (
	"id" serial PRIMARY KEY NOT NULL,
	"town" text NOT NULL,
	"super_petrol" numeric(6, 2) NOT NULL,
	"diesel" numeric(6, 2) NOT NULL,
	"kerosene" numeric(6, 2) NOT NULL,
	"valid_from" date NOT NULL,
	"valid_to" date NOT NULL,
	CONSTRAINT "fuel_prices_town_valid_from_key" UNIQUE("town","valid_from"),
	CONSTRAINT "fuel_prices_cycle_check" CHECK (extract(day from "fuel_prices"."valid_from") = 15 AND "fuel_prices"."valid_to" = ("fuel_prices"."valid_from" + interval '1 month' - interval '1 day')::date),
	CONSTRAINT "fuel_prices_prices_check" CHECK ("fuel_prices"."super_petrol" > 0 AND "fuel_prices"."diesel" > 0 AND "fuel_prices"."kerosene" > 0)
);
--> statement-breakpoint
CREATE INDEX "fuel_prices_order_idx" ON "fuel_prices" USING btree ("valid_from" DESC NULLS FIRST,lower("town") COLLATE "C","id");--> statement-breakpoint
CREATE INDEX "fuel_prices_town_order_idx" ON "fuel_prices" USING btree (lower("town") COLLATE "C","valid_from" DESC NULLS FIRST,"id");