import { sql, type SQL, type SQLWrapper } from 'drizzle-orm'
import { check, date, index, numeric, pgTable, serial, text, timestamp, unique } from 'drizzle-orm/pg-core'

/** A town column by its name in a query; the type refuses a plain string, so no value is pasted in as SQL. */
type TownColumn = 'town' | `${string}.town`

/** Town order: lower-cased, byte by byte, the same on every locale (D3); in JavaScript, domain/town.ts's `townKey`. */
export const townOrder = (town: SQLWrapper | TownColumn): SQL => sql`lower(${typeof town === 'string' ? sql.raw(town) : town}) COLLATE "C"`

/** One row per (town, cycle); the price and cycle rules are CHECK constraints too. */
export const fuelPrices = pgTable('fuel_prices', {
  id: serial('id').primaryKey(),
  town: text('town').notNull(),
  superPetrol: numeric('super_petrol', { precision: 6, scale: 2 }).notNull(),
  diesel: numeric('diesel', { precision: 6, scale: 2 }).notNull(),
  kerosene: numeric('kerosene', { precision: 6, scale: 2 }).notNull(),
  validFrom: date('valid_from', { mode: 'string' }).notNull(),
  validTo: date('valid_to', { mode: 'string' }).notNull(),
  // Commit time of the inserting ingest, giving a cycle's publication time; null on older rows.
  publishedAt: timestamp('published_at', { withTimezone: true, mode: 'string' }).defaultNow()
}, (t) => [
  // A record is unique per (town, valid_from) (spec 2 rule 2); the ingest upserts on it.
  unique('fuel_prices_town_valid_from_key').on(t.town, t.validFrom),
  // /v1/prices' order (newest cycle, town, id): the pages and the latest cycle read this index in order.
  index('fuel_prices_order_idx').on(t.validFrom.desc().nullsFirst(), townOrder(t.town), t.id),
  // The town filter in that order; also the skip scan behind GET /v1/towns.
  index('fuel_prices_town_order_idx').on(townOrder(t.town), t.validFrom.desc().nullsFirst(), t.id),
  check('fuel_prices_cycle_check', sql`extract(day from ${t.validFrom}) = 15 AND ${t.validTo} = (${t.validFrom} + interval '1 month' - interval '1 day')::date`),
  check('fuel_prices_prices_check', sql`${t.superPetrol} > 0 AND ${t.diesel} > 0 AND ${t.kerosene} > 0`)
])

export type NewFuelPriceRow = typeof fuelPrices.$inferInsert
