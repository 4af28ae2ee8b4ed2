import type { FastifyRequest } from 'fastify'

/** A shared cache files each public answer under the tags of the data it depends on, so a change drops only those. */
export const SURROGATE_KEY_HEADER = 'surrogate-key'

/** Every change can move any row of the lists: their tags are dropped on each ingest and withdrawal. */
const LIST_TAGS = ['prices', 'latest', 'changes', 'towns', 'cycles', 'feed'] as const

const cycleTag = (validFrom: string): string => `cycle-${validFrom}`

export type AnswerTags = string | ((request: FastifyRequest) => string)

/** By operationId: what each publicly cacheable read depends on. */
const ANSWER_TAGS: Readonly<Record<string, AnswerTags>> = {
  listPrices: 'prices',
  exportPricesCsv: 'prices',
  getLatestPrices: 'latest',
  listPriceChanges: 'changes',
  listTowns: 'towns',
  listCycles: 'cycles',
  getCyclesFeed: 'feed',
  getCycle: (request) => cycleTag((request.params as { valid_from: string }).valid_from)
}

export function answerTags (operationId: string | undefined): AnswerTags | undefined {
  return operationId === undefined ? undefined : ANSWER_TAGS[operationId]
}

/** A change to these cycles drops every list and those cycles' own pages. */
export function changeTags (validFroms: Iterable<string>): string[] {
  return [...LIST_TAGS, ...new Set([...validFroms].map(cycleTag))]
}
