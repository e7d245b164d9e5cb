// Lets Node load the service's TypeScript sources directly (no `nest build`, no dist/): `.ts` files are
// compiled on the fly by swc with the same options the tests use (jest.config.js: legacy decorators and
// their metadata, CommonJS), and the sources' NodeNext-style `./x.js` imports resolve to `./x.ts`.
// Used by the OpenAPI scripts, which need the controllers' decorators but not a running service.
import { readFileSync } from 'node:fs';
import { createRequire, registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const require = createRequire(`${root}/package.json`);
const { transformSync } = require('@swc/core');

registerHooks({
  resolve(specifier, context, next) {
    try {
      return next(specifier, context);
    } catch (error) {
      if (specifier.startsWith('.') && specifier.endsWith('.js')) return next(`${specifier.slice(0, -3)}.ts`, context);
      throw error;
    }
  },
  load(url, context, next) {
    if (!url.startsWith('file:') || !url.endsWith('.ts') || url.includes('/node_modules/')) return next(url, context);
    const filename = fileURLToPath(url);
    const { code } = transformSync(readFileSync(filename, 'utf8'), {
      filename,
      sourceMaps: 'inline',
      jsc: {
        parser: { syntax: 'typescript', decorators: true },
        transform: { legacyDecorator: true, decoratorMetadata: true },
        target: 'es2023',
      },
      module: { type: 'commonjs' },
    });
    return { format: 'commonjs', source: code, shortCircuit: true };
  },
});

/** `require` from the project root: `.ts` sources and the project's packages (CommonJS or ESM). */
export const requireFromRoot = require;
export const projectRoot = root;
