/* global module */
/**
 * Fault-injection runs (issue 7): each file starts its own throwaway PostgreSQL cluster and the built
 * service as a child process, so they are kept out of `npm test`. Run with `npm run test:faults`
 * (CI form, soak shortened) or `npm run soak` (the full 5-minute soak).
 */
module.exports = {
  rootDir: '../..',
  displayName: 'faults',
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/faults/**/*.faults-spec.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript' }, target: 'es2023' }, module: { type: 'commonjs' } },
    ],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testTimeout: 120_000,
  // The scenarios print their figures; keep them in order with jest's own output.
  verbose: true,
};
