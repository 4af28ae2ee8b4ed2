import { readFileSync } from 'node:fs'
import module from 'node:module'
import { fileURLToPath } from 'node:url'

/**
 * Coverage of src/ through source maps. tsx leaves the original text out of its source maps
 * (`"sourcesContent": [null]`, or `[""]`) unless NODE_V8_COVERAGE is set, and tap does not set it: it
 * collects coverage through the inspector. tap's report (c8 and v8-to-istanbul) then takes that
 * null for the file's text, maps every range onto an empty file, and shows each src/ file as
 * 100 % covered (or not at all). When tap collects coverage, the source maps tap reads at the end
 * of a test process get the files' text from disk, so the report shows real per-file figures.
 * Loaded by tap's node-arg (package.json), after tsx.
 */
if (process.env._TAPJS_PROCESSINFO_COVERAGE_ === '1') {
  const findSourceMap = module.findSourceMap
  const withText = new Map<string, module.SourceMap>()
  module.findSourceMap = (path: string): module.SourceMap | undefined => {
    const map = findSourceMap(path)
    if (map === undefined) return map
    const payload = map.payload
    // tsx leaves the text out as null, or as '' when its transform came from its cache.
    if (payload.sourcesContent !== undefined && payload.sourcesContent.some((text) => typeof text === 'string' && text !== '')) return map
    let fixed = withText.get(path)
    if (fixed === undefined) {
      const sourcesContent = payload.sources.map((source) => {
        try {
          return readFileSync(source.startsWith('file:') ? fileURLToPath(source) : source, 'utf8')
        } catch {
          return null
        }
      })
      fixed = new module.SourceMap({ ...payload, sourcesContent: sourcesContent as string[] }, { lineLengths: (map as unknown as { lineLengths: number[] }).lineLengths })
      withText.set(path, fixed)
    }
    return fixed
  }
  // tap imported findSourceMap by name: this makes its binding the function above.
  module.syncBuiltinESMExports()
}
