/**
 * The tests' time bounds on a slow host. A bound that only turns "never" into a failure (a
 * server's start, a request's abort, a wait for an event) is written for the usual hosts and
 * multiplied here by TEST_PACE: how many times slower this machine runs, which `.ci/run` measures
 * once (scripts/host-pace.mjs) and a maintainer on a slow machine may set by hand. A bound the
 * service promises (health within 2 s, a change visible within 2 s) is a behaviour and is never
 * scaled.
 */

/** TEST_PACE as a number from 1 to 20; unset or empty is 1. Anything else is a mistake, said at once. */
export function parsePace (value: string | undefined): number {
  if (value === undefined || value.trim() === '') return 1
  const pace = Number(value)
  if (!Number.isFinite(pace) || pace < 1 || pace > 20) throw new Error(`TEST_PACE must be a number from 1 to 20, got ${JSON.stringify(value)}`)
  return pace
}

export const PACE = parsePace(process.env.TEST_PACE)

/** `ms` for this host: the usual bound times the pace. */
export function paced (ms: number): number {
  return Math.round(ms * PACE)
}
