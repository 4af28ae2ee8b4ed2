// tap's coverage-map (package.json "tap"): the coverage of every test file is kept for the
// service's own sources only; server processes started from dist/ and the scripts stay out.
export default () => ['src/**/*.ts']
