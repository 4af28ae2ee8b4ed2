/**
 * The test processes' TypeScript loader (tap's node-arg in package.json), in place of tsx: only
 * the project's own `.ts` files go through it, each compiled once by TypeScript's transpileModule
 * and kept in node_modules/.cache until its text changes (test/README.md has the figures).
 */
import { register } from 'node:module'

register('./typescript-hooks.mjs', import.meta.url)
