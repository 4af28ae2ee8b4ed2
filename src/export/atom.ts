import { FUELS } from '../domain/fuels.js'
import type { CycleSummary } from '../generated/openapi.js'

/** The cycles' Atom feed (RFC 4287): entry links relative, the `self` link absolute (D52). */

export const ATOM_CONTENT_TYPE = 'application/atom+xml; charset=utf-8'

const FEED_PATH = '/v1/cycles/feed.atom'

/** Entry ids never change: a tag URI (RFC 4151) naming the cycle by its first day. */
const FEED_ID = 'tag:fuelkenya.com,2026:cycles'
const entryId = (validFrom: string): string => `${FEED_ID}/${validFrom}`

/** A cycle's time in the feed: when it was first published, or midnight in Kenya of its first day. */
const updatedOf = (cycle: CycleSummary): string => cycle.published_at ?? `${cycle.valid_from}T00:00:00+03:00`

/** `origin`: `https://host[:port]` of the feed's own URL; '' leaves `self` relative. */
export function atomFeed (cycles: readonly CycleSummary[], origin: string): string {
  // The feed changes when a cycle is published; with none, a fixed instant keeps it stable.
  const updated = cycles.map(updatedOf).sort().pop() ?? '1970-01-01T00:00:00Z'
  const lines = [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<feed xmlns="http://www.w3.org/2005/Atom">',
    `  <id>${FEED_ID}</id>`,
    '  <title>Kenya fuel pump prices: pricing cycles</title>',
    '  <subtitle>Maximum retail prices of super petrol, diesel and kerosene per town, one entry per cycle (15th to 14th).</subtitle>',
    `  <updated>${updated}</updated>`,
    '  <author><name>Fuel Price Service</name></author>',
    `  <link rel="self" type="application/atom+xml" href="${escapeXml(origin + FEED_PATH)}"/>`,
    ...cycles.flatMap(entry),
    '</feed>',
    ''
  ]
  return lines.join('\n')
}

function entry (cycle: CycleSummary): string[] {
  const { valid_from: from, valid_to: to } = cycle
  const prices = `/v1/prices?start_date=${from}&end_date=${to}&limit=1000`
  const changes = `/v1/prices/changes?valid_from=${from}`
  const fuels = FUELS.map(({ key, label }) => {
    const s = cycle[key]
    return `${label} ${s.min.toFixed(2)} to ${s.max.toFixed(2)} (mean ${s.mean.toFixed(2)})`
  })
  return [
    '  <entry>',
    `    <id>${entryId(from)}</id>`,
    `    <title>Pricing cycle ${from} to ${to}</title>`,
    `    <updated>${updatedOf(cycle)}</updated>`,
    ...(cycle.published_at === null ? [] : [`    <published>${cycle.published_at}</published>`]),
    `    <link rel="alternate" type="application/json" href="${escapeXml(prices)}"/>`,
    `    <link rel="related" type="application/json" title="Changes since the cycle before" href="${escapeXml(changes)}"/>`,
    `    <summary>${escapeXml(`${cycle.towns} towns. ${fuels.join('; ')}. KSh per litre.`)}</summary>`,
    '  </entry>'
  ]
}

function escapeXml (text: string): string {
  return text.replace(/[&<>"]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&quot;'))
}
