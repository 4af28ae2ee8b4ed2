#!/usr/bin/env node
/**
 * How many times slower than the hosts the tests' time bounds were set on this machine runs,
 * printed as one number (at least 1, one decimal) for TEST_PACE. `.ci/run` measures it once and
 * the tests multiply by it the bounds that only turn "never" into a failure: a server's start, a
 * request's abort, a wait for an event, a file's timeout. A host eight times slower than usual
 * (seen: `node -e 0` 0.9 s, a whole CI run 49 minutes) would otherwise fail for want of time.
 *
 * The measure is a fixed loop of plain JavaScript, best of five runs so one descheduling does not
 * count. REFERENCE_MS is derived, not measured on a usual host: on the slow one the loop's best took
 * 225–370 ms while its CI run took 2,921 s, about seven times the usual hosts' 390–420 s; so a
 * usual host reads about 1. An overestimate only makes a hang take longer to be reported.
 */
/* global process, console */ // plain JavaScript for Node: no TypeScript types to declare them
import { pathToFileURL } from 'node:url'

const ITERATIONS = 20_000_000
const REFERENCE_MS = 30
/** Beyond this a host is not slow but broken; the bounds stop growing. */
const MAX_PACE = 20

/** Milliseconds of one run of the loop. */
function loopMs () {
  const started = process.hrtime.bigint()
  let sum = 0
  for (let i = 0; i < ITERATIONS; i++) sum += i % 7
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  // The sum is used, so the loop cannot be optimised away.
  return sum < 0 ? Number.NaN : ms
}

/** @returns {number} this host's pace, from 1 to MAX_PACE, one decimal */
export function measurePace (runs = 5) {
  let best = Number.POSITIVE_INFINITY
  for (let i = 0; i < runs; i++) best = Math.min(best, loopMs())
  return Math.min(MAX_PACE, Math.max(1, Math.round((best / REFERENCE_MS) * 10) / 10))
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) console.log(measurePace())
