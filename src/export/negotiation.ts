/** Does `Accept` prefer `text/csv` over JSON (RFC 9110 12.5.1)? A tie keeps JSON unless CSV is named. */
export function prefersCsv (accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return false
  const csv = quality(accept, 'text', 'csv')
  const json = quality(accept, 'application', 'json')
  if (csv.q === 0) return false
  if (csv.q !== json.q) return csv.q > json.q
  return csv.exact && !json.exact
}

interface Match { q: number, exact: boolean }

function quality (accept: string, type: string, subtype: string): Match {
  let best: { specificity: number, q: number } | undefined
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase())
    const [t, s] = range.split('/')
    let specificity: number
    if (t === type && s === subtype) specificity = 3
    else if (t === type && s === '*') specificity = 2
    else if (t === '*' && s === '*') specificity = 1
    else continue
    const qParam = params.find((p) => p.startsWith('q='))
    const parsed = qParam === undefined ? 1 : Number(qParam.slice(2))
    const q = Number.isFinite(parsed) ? Math.min(Math.max(parsed, 0), 1) : 1
    if (best === undefined || specificity > best.specificity) best = { specificity, q }
  }
  return { q: best?.q ?? 0, exact: best?.specificity === 3 }
}
