// autocannon ships no types and @types/autocannon is not installed: only what load.ts uses.
declare module 'autocannon' {
  export interface Request {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: string | Buffer
    setupRequest?: (request: Request, context: Record<string, unknown>) => Request
  }
  export interface Options {
    url: string
    connections?: number
    pipelining?: number
    duration?: number
    timeout?: number
    requests?: Request[]
  }
  export interface Histogram { average: number, p50: number, p99: number, total: number }
  export interface Result {
    requests: Histogram
    latency: Histogram
    duration: number
    errors: number
    timeouts: number
    statusCodeStats: Record<string, { count: number }>
  }
  function autocannon (options: Options): Promise<Result>
  export default autocannon
}
